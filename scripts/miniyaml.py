"""The part of YAML that ragaliq's files use, read with the standard library
only: block mappings and sequences, plain, single- and double-quoted scalars
(over one or several lines), literal and folded block scalars (`|`, `>`, with
chomping and indentation indicators), `[]`/`{}` and JSON-like flow lists, and
comments. Flow lists and mappings of plain words (`[a, b]`, `{a: 3, b: 1}`)
too. Enough for insta snapshots (`*.snap`, after their `---` header) and
the labelled sets' `*.yaml`; anything else (anchors, tags, complex keys) is
refused with the line it stands on.

    import miniyaml
    data = miniyaml.load(text)

`scripts/band-designs.py selftest` checks it against PyYAML, where installed,
on every `.yaml` and `.snap` file under `tests/`.
"""
import json, re

__all__ = ['load', 'load_snapshot', 'YamlError']


class YamlError(ValueError):
    pass


_INT = re.compile(r'^[-+]?[0-9]+$')
_FLOAT = re.compile(r'^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$')
_ESC = {'0': '\0', 'a': '\a', 'b': '\b', 't': '\t', '\t': '\t', 'n': '\n', 'v': '\v', 'f': '\f', 'r': '\r',
        'e': '\x1b', ' ': ' ', '"': '"', '/': '/', '\\': '\\', 'N': '\x85', '_': '\xa0', 'L': '\u2028', 'P': '\u2029'}


def _plain(s):
    if s in ('', '~', 'null', 'Null', 'NULL'):
        return None
    if s in ('true', 'True', 'TRUE'):
        return True
    if s in ('false', 'False', 'FALSE'):
        return False
    if _INT.match(s):
        return int(s)
    if _FLOAT.match(s) and any(c.isdigit() for c in s):
        return float(s)
    if s in ('.inf', '.Inf', '+.inf'):
        return float('inf')
    if s in ('-.inf', '-.Inf'):
        return float('-inf')
    if s in ('.nan', '.NaN'):
        return float('nan')
    return s


def _fold(parts):
    """Line folding of a quoted or plain scalar over several lines: one break
    becomes a space, n empty lines become n breaks."""
    out, empties = '', 0
    for k, p in enumerate(parts):
        if k == 0:
            out = p
            continue
        if p == '':
            empties += 1
            continue
        out += ('\n' * empties) if empties else (' ' if not out.endswith('\n') else '')
        out += p
        empties = 0
    return out + '\n' * empties if empties else out


class _Reader:
    def __init__(self, text):
        self.lines = text.split('\n')
        if self.lines and self.lines[-1] == '':
            self.lines.pop()

    def err(self, i, why):
        line = self.lines[i] if i < len(self.lines) else ''
        return YamlError('line %d: %s: %r' % (i + 1, why, line[:80]))

    @staticmethod
    def indent(line):
        return len(line) - len(line.lstrip(' '))

    def skip(self, i):
        """The next line holding content (not blank, not a comment)."""
        while i < len(self.lines):
            s = self.lines[i].strip()
            if s and not s.startswith('#'):
                return i
            i += 1
        return i

    # ---------------------------------------------------------------- nodes
    def node(self, i, parent):
        """The node starting at the next content line, indented deeper than
        `parent` (or at `parent` for a sequence under a mapping key)."""
        i = self.skip(i)
        if i >= len(self.lines):
            return None, i
        line = self.lines[i]
        ind = self.indent(line)
        if ind < parent or (ind == parent and not self.is_seq(line)):
            return None, i
        if self.is_seq(line):
            return self.seq(i, ind)
        if self.key_at(line, ind) is not None:
            return self.mapping(i, ind)
        return self.scalar_lines(i, ind, line[ind:], parent)

    @staticmethod
    def is_seq(line):
        s = line.lstrip(' ')
        return s == '-' or s.startswith('- ')

    def seq(self, i, ind):
        out = []
        while True:
            i = self.skip(i)
            if i >= len(self.lines):
                break
            line = self.lines[i]
            if self.indent(line) != ind or not self.is_seq(line):
                if self.indent(line) > ind:
                    raise self.err(i, 'unexpected indentation in a sequence')
                break
            rest = line[ind + 1:]
            if rest.strip() == '' or rest.strip().startswith('#'):
                v, i = self.node(i + 1, ind + 1)
                out.append(v)
                continue
            col = ind + 1 + (len(rest) - len(rest.lstrip(' ')))
            if self.is_seq(' ' * col + rest.lstrip(' ')):
                # "- - x": a sequence inside a sequence, on one line
                self.lines[i] = ' ' * col + rest.lstrip(' ')
                v, i = self.seq(i, col)
                out.append(v)
                continue
            if self.key_at(' ' * col + rest.lstrip(' '), col) is not None:
                self.lines[i] = ' ' * col + rest.lstrip(' ')
                v, i = self.mapping(i, col)
                out.append(v)
                continue
            v, i = self.value(i, col, rest.lstrip(' '), ind)
            out.append(v)
        return out, i

    def key_at(self, line, ind):
        """(key, the text after `key:`) when the line at `ind` is a mapping entry."""
        s = line[ind:]
        if s.startswith('"') or s.startswith("'"):
            try:
                key, end = self.quoted_inline(s)
            except YamlError:
                return None
            rest = s[end:]
            if rest.startswith(':') and (len(rest) == 1 or rest[1] in ' \t'):
                return key, rest[1:]
            return None
        if s.startswith(('[', '{', '#', '|', '>', '&', '*', '!', '%', '@', '`')):
            return None
        m = re.search(r':(\s|$)', s)
        if not m:
            return None
        key = s[:m.start()].rstrip()
        if ' #' in key:
            return None
        return key, s[m.start() + 1:]

    def mapping(self, i, ind):
        out = {}
        while True:
            i = self.skip(i)
            if i >= len(self.lines):
                break
            line = self.lines[i]
            if self.indent(line) != ind:
                if self.indent(line) > ind:
                    raise self.err(i, 'unexpected indentation in a mapping')
                break
            if self.is_seq(line):
                break
            kv = self.key_at(line, ind)
            if kv is None:
                raise self.err(i, 'expected `key: value`')
            key, rest = kv
            rest_s = rest.strip()
            if rest_s == '' or rest_s.startswith('#'):
                v, i = self.node(i + 1, ind)
            else:
                col = len(line) - len(rest.lstrip(' '))
                v, i = self.value(i, col, rest.lstrip(' '), ind)
            out[key] = v
        return out, i

    # -------------------------------------------------------------- scalars
    def value(self, i, col, text, parent):
        """A value that starts on line i at column col (after `key:` or `- `)."""
        if text.startswith('"') or text.startswith("'"):
            return self.quoted(i, col)
        if text[0] in '|>':
            return self.block(i, text, parent)
        if text[0] in '[{':
            t = text.split(' #')[0].strip()
            if t in ('[]', '{}'):
                return ([] if t == '[]' else {}), i + 1
            try:
                return json.loads(t), i + 1
            except ValueError:
                pass
            inner = t[1:-1]
            if t.startswith('[') and t.endswith(']') and not any(c in inner for c in '[]{}"\''):
                return [_plain(x.strip()) for x in inner.split(',') if x.strip()], i + 1
            if t.startswith('{') and t.endswith('}') and not any(c in inner for c in '[]{}"\''):
                # A flow mapping of plain words (`{a: 3, b: 1}`: graded
                # relevance in a case file).
                out = {}
                for part in inner.split(','):
                    if not part.strip():
                        continue
                    key, sep, value = part.partition(': ')
                    if not sep or not key.strip():
                        raise self.err(i, 'a flow mapping entry without `key: value`')
                    out[_plain(key.strip())] = _plain(value.strip())
                return out, i + 1
            raise self.err(i, 'flow collections other than JSON or lists and mappings of plain words are not read')
        if text[0] in '&*!':
            raise self.err(i, 'anchors, aliases and tags are not read')
        return self.scalar_lines(i, col, text, parent)

    def scalar_lines(self, i, col, text, parent):
        """A plain scalar, continued on more-indented lines."""
        parts = [text.split(' #')[0].rstrip()]
        j = i + 1
        while j < len(self.lines):
            line = self.lines[j]
            if line.strip() == '':
                parts.append('')
                j += 1
                continue
            if self.indent(line) <= parent or line.strip().startswith('#'):
                break
            parts.append(line.strip().split(' #')[0].rstrip())
            j += 1
        while parts and parts[-1] == '':
            parts.pop()
            j -= 1
        return _plain(_fold(parts)), j

    def quoted_inline(self, s):
        """A quoted scalar that ends on this line: (value, index after it)."""
        q = s[0]
        k, out = 1, []
        while k < len(s):
            c = s[k]
            if q == "'" and c == "'":
                if k + 1 < len(s) and s[k + 1] == "'":
                    out.append("'")
                    k += 2
                    continue
                return ''.join(out), k + 1
            if q == '"' and c == '"':
                return ''.join(out), k + 1
            if q == '"' and c == '\\':
                k, ch = self.escape(s, k)
                out.append(ch)
                continue
            out.append(c)
            k += 1
        raise YamlError('unterminated quoted scalar')

    @staticmethod
    def escape(s, k):
        c = s[k + 1] if k + 1 < len(s) else ''
        if c in _ESC:
            return k + 2, _ESC[c]
        n = {'x': 2, 'u': 4, 'U': 8}.get(c)
        if n:
            return k + 2 + n, chr(int(s[k + 2:k + 2 + n], 16))
        raise YamlError('unknown escape \\%s' % c)

    def quoted(self, i, col):
        """A quoted scalar from line i, column col, over as many lines as it
        takes: a line break folds to a space (empty lines to breaks); in
        double quotes a `\\` at the end of a line joins without one."""
        q = self.lines[i][col]
        parts, cur, glue = [], [], []
        line_no, s, k = i, self.lines[i], col + 1
        while True:
            if k >= len(s):
                parts.append(''.join(cur).rstrip(' \t'))
                glue.append(False)
                cur = []
                line_no += 1
                if line_no >= len(self.lines):
                    raise self.err(i, 'unterminated quoted scalar')
                s = self.lines[line_no]
                k = len(s) - len(s.lstrip(' \t'))
                continue
            c = s[k]
            if q == "'" and c == "'":
                if k + 1 < len(s) and s[k + 1] == "'":
                    cur.append("'")
                    k += 2
                    continue
                break
            if q == '"' and c == '"':
                break
            if q == '"' and c == '\\':
                if k + 1 >= len(s):
                    parts.append(''.join(cur))
                    glue.append(True)
                    cur = []
                    line_no += 1
                    s = self.lines[line_no]
                    k = len(s) - len(s.lstrip(' \t'))
                    continue
                k, ch = self.escape(s, k)
                cur.append(ch)
                continue
            cur.append(c)
            k += 1
        parts.append(''.join(cur))
        out, empties = parts[0], 0
        for n, p in enumerate(parts[1:]):
            if glue[n]:
                out += p
                continue
            if p == '' and n + 1 < len(parts) - 1:
                empties += 1
                continue
            out += ('\n' * empties) if empties else (' ' if p or n + 1 == len(parts) - 1 else '')
            out += p
            empties = 0
        rest = s[k + 1:].strip()
        if rest and not rest.startswith('#'):
            raise self.err(line_no, 'text after a quoted scalar')
        return out, line_no + 1

    def block(self, i, header, parent):
        m = re.match(r'^([|>])([-+]?)([1-9]?)([-+]?)\s*(#.*)?$', header)
        if not m:
            raise self.err(i, 'bad block scalar header')
        style, chomp, digit = m.group(1), m.group(2) or m.group(4), m.group(3)
        j = i + 1
        lines = []
        base = None
        if digit:
            base = parent + int(digit) if parent >= 0 else int(digit)
        while j < len(self.lines):
            line = self.lines[j]
            if line.strip() == '':
                lines.append(None)
                j += 1
                continue
            ind = self.indent(line)
            if base is None:
                if ind <= parent:
                    break
                base = ind
            if ind < base:
                break
            lines.append(line[base:])
            j += 1
        # trailing blank lines belong to the scalar only for chomping
        trail = 0
        while lines and lines[-1] is None:
            lines.pop()
            trail += 1
        j -= trail
        body = [l if l is not None else '' for l in lines]
        if style == '|':
            text = '\n'.join(body)
        else:
            text, prev_more = '', False
            for k, l in enumerate(body):
                more = l.startswith((' ', '\t'))
                if k == 0:
                    text = l
                elif l == '':
                    text += '\n'
                elif more or prev_more or body[k - 1] == '':
                    text += ('\n' if not text.endswith('\n') or more or prev_more else '') + l
                else:
                    text += ' ' + l
                prev_more = more and l != ''
        if not body:
            text = ''
        if chomp == '-':
            out = text
        elif chomp == '+':
            out = text + '\n' + '\n' * trail if body else '\n' * trail
        else:
            out = text + '\n' if body else ''
        return out, j


def load(text):
    r = _Reader(text)
    v, i = r.node(0, -1)
    i = r.skip(i)
    if i < len(r.lines):
        raise r.err(i, 'content after the document')
    return v


def load_snapshot(text):
    """An insta snapshot: the YAML after its `---` ... `---` header."""
    if text.startswith('---\n'):
        text = text.split('\n---\n', 1)[1]
    return load(text)
