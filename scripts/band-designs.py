#!/usr/bin/env python3
"""Uncertainty bands for the judge's readings, chosen leave-one-source-out on
public human-labelled sources (issues 40 and 42): bench/bands/README.md.

A reading is a probability p (P(yes) renormalised over the answer words, read
at the reply's first word as ragaliq's `parse::answer_word` reads it, from the
first 10 alternatives the server listed; for claims P(supported)). Each kind
has a threshold t and a band [lo, hi), lo <= t <= hi: p >= hi is decided yes,
p < lo decided no, anything else is uncertain (awaits a stronger judge or a
person). lo = hi = t is today's behaviour; "never" decides nothing.
Correctness first applies the found rule (`found_rule` below): the reference,
or one of its accepted answers, found in the response as whole words and not
negated there decides "correct" with no call.

No server: this script reads the caches other scripts wrote
(`scripts/verdict-designs.py ask`, `scripts/correctness-designs.py ask`) and
answers imported from ragaliq's committed recordings (`import`), with the
labelled sets. Standard library only (the snapshots are read by
`scripts/miniyaml.py`).

    scripts/band-designs.py import --model qwen15 --out bench/bands/recorded-qwen15.jsonl SNAPSHOT...
    scripts/band-designs.py report [--write]      # every table of bench/bands/README.md
    scripts/band-designs.py found                 # the found rule on tests/fixtures/answer_found.json
    scripts/band-designs.py selftest              # miniyaml against PyYAML (if installed), the reader, the fixture
"""
import argparse, csv, functools, glob, hashlib, io, json, math, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import miniyaml  # noqa: E402

TOP = 10  # ragaliq asks for, and reads, the 10 likeliest alternatives
MIN_ANSWER_MASS = 0.5

# --------------------------------------------------------------- the sets

CLAIM_SETS = {
    # source: [(half, dir)]; BEGIN's two folders are one source
    'begin': ['tests/public_claims/begin/{h}/cmu', 'tests/public_claims/begin/{h}/wow'],
    'dialfact': ['tests/public_claims/dialfact/{h}'],
    'expertqa': ['tests/public_claims/expertqa/{h}'],
    'faithbench': ['tests/public_claims/faithbench/{h}'],
    'fm2': ['tests/public_claims/fm2/{h}'],
    'healthver': ['tests/public_claims/healthver/{h}'],
    'ours': ['tests/labelled_claims/{h}'],
}
CORRECTNESS_SETS = {
    'openqa': ['tests/public_correctness/openqa/{h}', 'tests/public_correctness/openqa-more/{h}'],
    'liveqa-med': ['tests/public_correctness/liveqa-med/{h}'],
    'truthfulqa': ['tests/public_correctness/truthfulqa/{h}'],
    'roscoe-gsm8k': ['tests/public_correctness/roscoe-gsm8k/{h}'],
    'ours': ['tests/labelled_correctness/{h}'],
}
CRITERIA_SETS = {
    'kqa': ['tests/public_criteria/kqa/{h}'],
    'llmbar': ['tests/public_criteria/llmbar/{h}'],
    'inferential': ['tests/public_criteria/inferential/{h}'],
    'dices': ['tests/public_criteria/dices/{h}'],
    'roscoe': ['tests/public_criteria/roscoe/{h}'],
    'ours': ['tests/labelled_criteria/{h}'],
}
SETS = {'claims': CLAIM_SETS, 'correctness': CORRECTNESS_SETS, 'criteria': CRITERIA_SETS}
# What kind of reference each correctness source has (issue 42's targets differ).
REFERENCE_KIND = {'openqa': 'short', 'liveqa-med': 'long', 'truthfulqa': 'sentence',
                  'roscoe-gsm8k': 'long', 'ours': 'sentence'}
THRESHOLD = {'claims': 0.33, 'correctness': 0.5, 'criteria': 0.45}
DESIGN = {'claims': 'sup', 'correctness': 'direct', 'criteria': 'met'}
POSITIVE = {'claims': ('supported',), 'correctness': ('correct',), 'criteria': ('meets',)}


def read_items(path):
    """Labelled items of one file, flattened: JSONL, JSON or YAML lists of
    items or of groups (`passages` + `claims`), CSV with a JSON `passages`."""
    text = open(path, encoding='utf-8').read()
    if path.endswith('.jsonl'):
        raw = [json.loads(l) for l in text.splitlines() if l.strip()]
    elif path.endswith('.json'):
        raw = json.loads(text)
    elif path.endswith(('.yaml', '.yml')):
        raw = miniyaml.load(text)
    elif path.endswith('.csv'):
        raw = []
        for r in csv.DictReader(io.StringIO(text)):
            r = dict(r)
            if r.get('passages'):
                r['passages'] = json.loads(r['passages'])
            raw.append(r)
    else:
        return []
    out = []
    for r in raw or []:
        if 'claims' in r and isinstance(r['claims'], list):
            for c in r['claims']:
                it = dict(c)
                it.setdefault('passages', r.get('passages') or [])
                it.setdefault('area', r.get('area'))
                out.append(it)
        else:
            out.append(r)
    return out


@functools.lru_cache(maxsize=None)
def load(kind, only_present=True):
    """Every labelled item of a kind: dicts with source and half added."""
    items = []
    for source, dirs in SETS[kind].items():
        for half in ('dev', 'test'):
            for d in dirs:
                path = os.path.join(ROOT, d.format(h=half))
                if not os.path.isdir(path):
                    if only_present:
                        continue
                    raise FileNotFoundError(path)
                for f in sorted(os.listdir(path)):
                    if not os.path.isfile(os.path.join(path, f)):
                        continue
                    for it in read_items(os.path.join(path, f)):
                        it = dict(it)
                        it['source'], it['half'], it['file'] = source, half, os.path.relpath(os.path.join(path, f), ROOT)
                        items.append(it)
    return items


def positive(kind, it):
    return it['label'] in POSITIVE[kind]


# ------------------------------------------------------- reading a reply

def letters(s):
    return ''.join(c for c in s if c.isalnum()).lower()


def _lead_in(c):
    return c.isspace() or c in '"\'“”‘’«»`*'


def _skip(text, i):
    while i < len(text) and _lead_in(text[i]):
        i += 1
    return i


def _first_word_start(text):
    i = _skip(text, 0)
    if text[i:i + 7].lower() == 'answer:':
        i = _skip(text, i + 7)
    return i


def _word_end(text, start):
    end = start
    n = len(text)
    for k in range(start, n):
        c = text[k]
        inside = c.isalnum()
        if not inside and c in '-_':
            inside = k > start and text[k - 1].isalnum() and k + 1 < n and text[k + 1].isalnum()
        if not inside and c in '.,':
            inside = k > start and text[k - 1].isdigit() and k + 1 < n and text[k + 1].isdigit()
        if not inside:
            break
        end = k + 1
    return end


def which(text, words):
    key = letters(text)
    if not key:
        return None
    hits = [i for i, w in enumerate(words) if letters(w) == key]
    return hits[0] if len(hits) == 1 else None


def answer_word(reply, tokens, words=('yes', 'no'), top=TOP):
    """ragaliq's `parse::answer_word` at the reply's first word
    (`AnswerAt::First`): the answer words' probabilities, or None where ragaliq
    refuses the reply. `tokens`: [(token, logprob, [(alt, logprob), ...])]."""
    start = _first_word_start(reply)
    written = reply[start:_word_end(reply, start)]
    w = which(written, words)

    def from_word():
        if w is None:
            return None
        return [1.0 if i == w else 0.0 for i in range(len(words))]

    if not tokens:
        return from_word()
    joined = ''.join(t[0] for t in tokens)
    j = _first_word_start(joined)
    there = joined[j:_word_end(joined, j)]
    if there != written or (not there and joined[j:j + 1] != reply[start:start + 1]):
        return from_word()
    offset, at = 0, None
    for k, t in enumerate(tokens):
        if j < offset + len(t[0]):
            at = (k, offset)
            break
        offset += len(t[0])
    if at is None:
        return from_word()
    k, token_start = at
    if any(c.isalnum() for c in joined[token_start:j]):
        return from_word()
    token, lp, alts = tokens[k]
    mass = [0.0] * len(words)
    seen = False
    for alt, alp in alts[:top]:
        seen |= alt == token
        i = w if alt == token else which(alt, words)
        if i is not None:
            mass[i] += math.exp(alp)
    if not seen and w is not None:
        mass[w] += math.exp(lp)
    total = sum(mass)
    if not ((w is not None or total >= MIN_ANSWER_MASS) and total > 0 and math.isfinite(total)):
        return from_word()
    return [min(max(m / total, 0.0), 1.0) for m in mass]


def cache_tokens(e):
    """A cache line's tokens in answer_word's form (alternatives sorted likeliest first)."""
    return [(t['t'], t['lp'], sorted(((a, l) for a, l in t['top']), key=lambda x: -x[1])) for t in e.get('tokens') or []]


def p_yes(e):
    r = answer_word(e.get('text') or ''.join(t['t'] for t in e.get('tokens') or []), cache_tokens(e))
    return None if r is None else r[0]


# ------------------------------------------------------------ the found rule
#
# Written out in bench/bands/README.md ("The found rule"); its cases are
# tests/fixtures/answer_found.json. In short: the response is cut into clauses
# (at . ! ? ; : , and dashes, except a . , or : between two digits); the
# response's words are normalised; an accepted answer is *found* where its
# normalised words stand consecutively among them; an occurrence is *negated*
# when a clause it touches holds a negation cue anywhere; the answer is
# decided correct when some occurrence of some accepted answer is found and
# not negated.

UNITS = 'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen'.split()
TENS = {'twenty': 20, 'thirty': 30, 'forty': 40, 'fifty': 50, 'sixty': 60, 'seventy': 70, 'eighty': 80, 'ninety': 90}
NUMBER = {w: i for i, w in enumerate(UNITS)}
NUMBER.update(TENS)
ARTICLES = {'a', 'an', 'the'}
# Negation cues, as normalised words (n't is read before normalising).
NEGATORS = {'not', 'no', 'never', 'neither', 'nor', 'none', 'cannot', 'false', 'untrue', 'incorrect', 'wrong',
            'myth', 'misconception', 'except', 'unlike'}
NEGATING_PAIRS = {('rather', 'than'), ('instead', 'of'), ('other', 'than')}
# "no later than 30 days", "not more than 30 days": a limit, not a denial.
COMPARATIVES = {'later', 'earlier', 'sooner', 'more', 'less', 'fewer', 'longer', 'shorter', 'greater', 'higher', 'lower',
                'older', 'younger', 'bigger', 'smaller'}
CLAUSE_BOUND = re.compile(r'(?<!\d)[.:,]|[.:,](?!\d)|[!?;]|\s[-–—]+\s|[–—]')


def clauses(text):
    """The response cut into clauses: at . : , (except between two digits),
    ! ? ; and dashes between words."""
    return [c for c in CLAUSE_BOUND.split(text) if c.strip()]


def words(text):
    """Normalised words: lower-case; n't -> " not"; a thousands comma between
    digits dropped (1,776 -> 1776); a decimal point or comma between digits
    kept inside the number (30.5 stays 30.5, never "30" and "5"); every other
    character that is not a letter or digit becomes a space; a, an, the
    dropped; number words zero..nineteen, twenty..ninety, hundred, and their
    compounds written as one number (thirty-one -> 31, one hundred and five
    -> 105)."""
    s = text.lower()
    s = re.sub(r"(\w)n['’]t\b", r'\1 not', s)
    s = re.sub(r'(?<=\d),(?=\d{3}(?!\d))', '', s)
    s = re.sub(r'(?<=\d)[.,](?=\d)', '\x00', s)
    s = ''.join(c if c.isalnum() or c.isspace() or c == '\x00' else ' ' for c in s)
    toks = [t.replace('\x00', '.') for t in s.split() if t not in ARTICLES]
    out, k = [], 0
    while k < len(toks):
        t = toks[k]
        if t in NUMBER or (t == 'hundred'):
            # a run of number words: [units] [hundred [and]] [tens] [units]
            value, j, seen = 0, k, False
            if toks[j] in NUMBER and NUMBER[toks[j]] < 20 and j + 1 < len(toks) and toks[j + 1] == 'hundred':
                value, j, seen = NUMBER[toks[j]] * 100, j + 2, True
            elif toks[j] == 'hundred':
                value, j, seen = 100, j + 1, True
            if seen and j + 1 < len(toks) and toks[j] == 'and' and toks[j + 1] in NUMBER:
                j += 1
            if j < len(toks) and toks[j] in TENS:
                value, j, seen = value + TENS[toks[j]], j + 1, True
                if j < len(toks) and toks[j] in NUMBER and 0 < NUMBER[toks[j]] < 10:
                    value, j = value + NUMBER[toks[j]], j + 1
            elif j < len(toks) and toks[j] in NUMBER and NUMBER[toks[j]] < 20 and (seen or j == k):
                value, j, seen = value + NUMBER[toks[j]], j + 1, True
            out.append(str(value))
            k = j
            continue
        out.append(t)
        k += 1
    return out


def accepted(reference):
    """`Accepted answers: "A"; "B"` gives A and B; any other reference is one answer."""
    r = reference.strip()
    if r.startswith('Accepted answers:'):
        return [a.replace('\\"', '"') for a in re.findall(r'"((?:[^"\\]|\\.)*)"', r)]
    return [r]


def negation_in(ws):
    """The negation cue in a clause's words, or None."""
    for k, w in enumerate(ws):
        nxt = ws[k + 1] if k + 1 < len(ws) else ''
        if w in ('no', 'not') and nxt in COMPARATIVES and 'than' in ws[k + 2:k + 4]:
            continue
        if w == 'not' and nxt in ('only', 'just'):
            continue
        if w in NEGATORS:
            return w
        if (w, nxt) in NEGATING_PAIRS:
            return w + ' ' + nxt
    return None


@functools.lru_cache(maxsize=None)
def found_rule(reference, response):
    """(found, negated, what). The response's normalised words in order, each
    with the clause it stands in; an accepted answer is found where its
    normalised words stand there consecutively (a match may run over a clause
    bound, as in "U.S. Army"); an occurrence is negated when a clause it
    touches holds a negation cue. found: some occurrence of some accepted
    answer; negated: found, and every occurrence negated. `what` says which
    answer was found, or the cue that negated it."""
    cl = clauses(response)
    toks = [(w, ci) for ci, c in enumerate(cl) for w in words(c)]
    cues = [negation_in(words(c)) for c in cl]
    seq = [w for w, _ in toks]
    hits = []
    for a in accepted(reference):
        aw = words(a)
        n = len(aw)
        if not n:
            continue
        for k in range(len(seq) - n + 1):
            if seq[k:k + n] == aw:
                touched = sorted(set(ci for _, ci in toks[k:k + n]))
                cue = next((cues[ci] for ci in touched if cues[ci]), None)
                hits.append((a, touched[0], cue))
    if not hits:
        return False, False, 'not found'
    clean = [h for h in hits if h[2] is None]
    if clean:
        return True, False, f'found «{clean[0][0]}» in clause {clean[0][1] + 1}'
    return True, True, f'found «{hits[0][0]}», negated by «{hits[0][2]}» in its clause'


def plain_match(reference, response):
    """The baseline: an accepted answer found as whole words, negated or not."""
    return found_rule(reference, response)[0]


# ------------------------------------------- answers in committed recordings

TASK_DESIGN = {'claim_supported': 'sup', 'claim_contradicted': 'con', 'answer_correct': 'direct', 'criteria_met': 'met'}
TASK_KIND = {'claim_supported': 'claims', 'claim_contradicted': 'claims', 'answer_correct': 'correctness', 'criteria_met': 'criteria'}


def item_key(kind, it):
    s = lambda x: (x or '').strip()
    if kind == 'claims':
        return (s(it['claim']), tuple(s(p) for p in it.get('passages') or []))
    if kind == 'correctness':
        return (s(it['query']), s(it.get('reference') or it.get('expected')), s(it['response']))
    return (s(it['criteria']), s(it['query']), s(it['response']))


def snapshot_exchanges(path):
    """(kind, design, key, reply, tokens, read) for every yes/no exchange of a snapshot."""
    rec = miniyaml.load_snapshot(open(path, encoding='utf-8').read())
    refs = {}
    for p in rec.get('passages') or []:
        refs.update(p)
    for ex in rec.get('exchanges') or []:
        task = ex.get('task')
        if task not in TASK_DESIGN:
            continue
        kind = TASK_KIND[task]
        asked = dict(ex['asked'])
        if kind == 'claims':
            asked['passages'] = [refs[r] for r in asked.get('passages') or []]
        tokens = [(t['token'], t['logprob'], sorted((t.get('top') or {}).items(), key=lambda x: -x[1]))
                  for t in ex.get('probabilities') or []]
        read = None
        for c in ex.get('checked') or []:
            m = re.match(r'P\(yes\) ([0-9.]+)', c.get('read') or '')
            if m:
                read = float(m.group(1))
        yield kind, TASK_DESIGN[task], item_key(kind, asked), ex.get('reply') or '', tokens, read


def cmd_import(args):
    """Answers already in ragaliq's committed recordings, read as the product
    reads them, into a cache file (one line per answer, the caches' form:
    design, item ids, tokens with their likeliest alternatives, no timing)."""
    index = {}
    for kind in SETS:
        for it in load(kind):
            index.setdefault((kind, item_key(kind, it)), []).append(it)
    seen = set()
    if os.path.exists(args.out):
        seen = {json.loads(l)['key'] for l in open(args.out, encoding='utf-8')}
    out = open(args.out, 'a', encoding='utf-8')
    n, unmatched, mismatch = 0, 0, 0
    for snap in args.snapshots:
        for kind, design, k, reply, tokens, read in snapshot_exchanges(snap):
            its = index.get((kind, k))
            if not its:
                unmatched += 1
                continue
            r = answer_word(reply, tokens)
            if read is not None and (r is None or abs(r[0] - read) > 0.0005 + 1e-9):
                mismatch += 1
                print(f'{snap}: read {read} here {r}', file=sys.stderr)
            for it in its:
                key = hashlib.sha256(json.dumps(['recorded', args.model, design, it['id'], it['source']]).encode()).hexdigest()[:24]
                if key in seen:
                    continue
                seen.add(key)
                e = {'key': key, 'model': args.model, 'design': design, 'ids': [it['id']], 'secs': None,
                     'text': reply[:40], 'tokens': [{'t': t, 'lp': lp, 'top': [[a, l] for a, l in alts]} for t, lp, alts in tokens[:4]],
                     'from': os.path.relpath(os.path.abspath(snap), ROOT)}
                out.write(json.dumps(e, ensure_ascii=False) + '\n')
                n += 1
    print(f'imported {n} answers; {unmatched} exchanges matched no labelled item; '
          f'{mismatch} read differently from the recording\'s own reading', file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest='cmd', required=True)
    i = sub.add_parser('import', help='answers in committed recordings, into a cache file')
    i.add_argument('--model', required=True)
    i.add_argument('--out', required=True)
    i.add_argument('snapshots', nargs='+')
    args = p.parse_args()
    {'import': cmd_import}[args.cmd](args)


if __name__ == '__main__':
    main()
