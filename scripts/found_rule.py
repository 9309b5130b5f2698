"""The found rule of answer correctness, ported from ragaliq's
`ragaliq/src/evidence/answer.rs` (the Rust is the rule; this port measures
it on the public sets, and both read `tests/fixtures/answer_found.json`).
Standard library only.

    import found_rule
    r = found_rule.found_rule(query, reference, response)
    r.found      # an accepted answer stands in the response (plain matching)
    r.decided    # the rule decides the answer correct with no call
    r.doubt      # what kept it from deciding: (kind, word), or None

The rule, in short (bench/bands/README.md, "The found rule", says it whole):

1. Words. The texts are read in NFC as words: lower case; `n't` is `not`;
   number words are numbers; a sign (`-5`, `minus 5`), a currency (`$30`,
   `30 dollars`, `USD 30`, `A$30`), a percentage (`30%`, `30 per cent`), a
   temperature (`-5 °C`, `5 degrees Celsius`), an era (`500 BC`) and a
   unit (`30 kilometres`) after a number are part of it; dates read month,
   day, year whatever their order; `a`, `an`, `the` are left out.
2. Found. An accepted answer's words stand one after another among the
   response's, and where it ends in a number, no currency, percentage,
   temperature, era or magnitude (`million`) follows that number there.
3. Decided. Found, and nothing casts doubt on it: the question does not
   hold the answer's words; a yes or no opens the response on its own, its
   opposite stands nowhere, and what follows it shares a word with the
   question; no `?` and no quotation mark outside it; no
   word outside it denies, hedges, contrasts, reports, offers options,
   qualifies (a limit the question itself sets excepted) or, for a name,
   relates; no `'s`, no `is the year …` and no unit the question lacks
   after it; and nothing else offers a value of its kind (another number
   or month for an answer with a number; another capitalised name, or a
   word that makes a longer name, for a name; for a yes or no, a number or
   name the question lacks; for any other answer, any word that is
   neither the question's nor a small word).
"""
import functools
import os
import re
import unicodedata

# ------------------------------------------------------------------ tables

HERE = os.path.dirname(os.path.abspath(__file__))
WORDS_FILE = os.path.join(os.path.dirname(HERE), 'ragaliq', 'src', 'evidence', 'answer', 'words.txt')


def _tables(path):
    """The word tables of `words.txt`: a set per section, a dict where its
    words are `word=value`."""
    tables, name = {}, None
    for line in open(path, encoding='utf-8'):
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        if line.startswith('[') and line.endswith(']'):
            name = line[1:-1]
            tables[name] = []
            continue
        tables[name].extend(line.split())
    out = {}
    for name, words in tables.items():
        if words and all('=' in w for w in words):
            out[name] = dict(w.split('=', 1) for w in words)
        else:
            out[name] = set(words)
    return out


T = _tables(WORDS_FILE)
UNITS = ('zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen '
         'sixteen seventeen eighteen nineteen').split()
TENS = 'twenty thirty forty fifty sixty seventy eighty ninety'.split()
ARTICLES = {'a', 'an', 'the'}
CURRENCY_SIGNS = {'$': 'usd', '€': 'eur', '£': 'gbp', '¥': 'jpy'}
DOLLAR_PREFIXES = T['dollar-prefixes']
CURRENCY_WORDS = T['currency-words']
CURRENCIES = set(CURRENCY_WORDS.values())
# Marks that are part of a number: a number followed by one is another value.
MARKS = CURRENCIES | {'percent', 'celsius', 'fahrenheit', 'degrees'}
ERAS = T['eras']
MAGNITUDES = T['magnitudes']
UNIT_WORDS = T['units']
MONTHS = T['months']
MONTH_SHORT = T['month-short']
QUOTES = set('"“”„«»')
DENIES, HEDGES, CONTRASTS = T['denies'], T['hedges'], T['contrasts']
REPORTS, OFFERS, QUALIFIES = T['reports'], T['offers'], T['qualifies']
CLASSES = [('denies', DENIES), ('hedges', HEDGES), ('contrasts', CONTRASTS), ('reports', REPORTS),
           ('offers', OFFERS), ('qualifies', QUALIFIES)]
PAIRS = {tuple(k.split('_')): v for k, v in T['pairs'].items()}
RELATES = T['relates']
PLAIN_NEGATIONS = T['plain-negations']
COPULAS, DESCRIBED = T['copulas'], T['described']
NAME_AFTER, NAME_BEFORE = T['name-after'], T['name-before']
SMALL = T['small']


# ------------------------------------------------------------------- words

class Word:
    __slots__ = ('text', 'start', 'end', 'first', 'last', 'cap', 'opens', 'mark')

    def __init__(self, text, start, end, first, last=None, cap=False, opens=False, mark=False):
        self.text, self.start, self.end = text, start, end
        self.first, self.last = first, first if last is None else last
        self.cap, self.opens, self.mark = cap, opens, mark

    def __repr__(self):
        return self.text


def digit(c):
    return '0' <= c <= '9'


def is_number(t):
    return any(digit(c) for c in t)


def _raw(chars):
    """Characters to words: runs of letters and digits, lower case (`n't`
    read as `not`; a sign before a number, a point or comma between digits
    kept in it, a thousands comma dropped), and marks (`$`, `%`, `°C`).
    Each word knows whether it was capitalised and whether it opens a
    sentence; a mark takes the number of the word before it."""
    out = []
    n = len(chars)
    state = {'cur': '', 'start': 0, 'cap': False, 'opens': True, 'number': 0}

    def alnum(i):
        return 0 <= i < n and chars[i].isalnum()

    def dig(i):
        return 0 <= i < n and digit(chars[i])

    def push(text, start, end, cap):
        state['number'] += 1
        out.append(Word(text, start, end, state['number'], cap=cap, opens=state['opens']))
        state['opens'] = False

    def flush(end):
        if state['cur']:
            push(state['cur'], state['start'], end, state['cap'])
            state['cur'] = ''

    def mark(text, start, end):
        out.append(Word(text, start, end, state['number'], mark=True))

    k = 0
    while k < n:
        c = chars[k]
        if c.isalnum():
            if not state['cur']:
                state['start'], state['cap'] = k, c.isupper()
            state['cur'] += c.lower()
            k += 1
            continue
        if c in "'’" and k >= 2 and chars[k - 1] in 'nN' and alnum(k - 2) and k + 1 < n and chars[k + 1] in 'tT' \
                and not alnum(k + 2):
            # `isn't`: `is`, then `not`.
            state['cur'] = state['cur'][:-1]
            flush(k - 1)
            push('not', k - 1, k + 2, False)
            k += 2
            continue
        if c in '.,' and state['cur'] and dig(k - 1) and dig(k + 1):
            # `1,776` is 1776; `30.5` one number.
            thousands = c == ',' and all(dig(j) for j in range(k + 1, k + 4)) and not dig(k + 4)
            if not thousands:
                state['cur'] += '.'
            k += 1
            continue
        if c in '-−–+' and dig(k + 1) and not alnum(k - 1):
            # A sign: part of the number after it.
            state['start'], state['cap'] = k, False
            state['cur'] = '' if c == '+' else '-'
            k += 1
            continue
        if c == '$' and state['cur'] in DOLLAR_PREFIXES:
            # `A$30`: the letters name the dollar.
            mark(DOLLAR_PREFIXES[state['cur']], state['start'], k + 1)
            state['cur'] = ''
            k += 1
            continue
        flush(k)
        if c in CURRENCY_SIGNS:
            mark(CURRENCY_SIGNS[c], k, k + 1)
        elif c == '%':
            mark('percent', k, k + 1)
        elif c in '℃℉':
            mark('celsius' if c == '℃' else 'fahrenheit', k, k + 1)
        elif c == '°':
            j = k + 1 + (k + 1 < n and chars[k + 1] == ' ')
            if j < n and chars[j] in 'cCfF' and not alnum(j + 1):
                mark('celsius' if chars[j] in 'cC' else 'fahrenheit', k, j + 1)
                k = j + 1
                continue
            mark('degrees', k, k + 1)
        elif c in '.!?:;\n':
            state['opens'] = True
        k += 1
    flush(n)
    return out


def _number_words(ws):
    """Number words as one number: [unit hundred [and]] [tens [unit]], or a
    unit alone (`thirty-one` is 31, `one hundred and five` 105)."""
    out, k = [], 0

    def t(j):
        return ws[j].text if j < len(ws) and not ws[j].mark else None

    while k < len(ws):
        w = ws[k]
        x = t(k)
        if x is None or (x not in UNITS and x not in TENS and x != 'hundred'):
            out.append(w)
            k += 1
            continue
        value, j, seen = 0, k, False
        if x in UNITS and t(k + 1) == 'hundred':
            value, j, seen = UNITS.index(x) * 100, k + 2, True
        elif x == 'hundred':
            value, j, seen = 100, k + 1, True
        if seen and t(j) == 'and' and (t(j + 1) in UNITS or t(j + 1) in TENS):
            j += 1
        if t(j) in TENS:
            value += 20 + 10 * TENS.index(t(j))
            j += 1
            if t(j) in UNITS and 1 <= UNITS.index(t(j)) <= 9:
                value += UNITS.index(t(j))
                j += 1
        elif t(j) in UNITS and (seen or j == k):
            value += UNITS.index(t(j))
            j += 1
        j = max(j, k + 1)
        out.append(Word(str(value), w.start, ws[j - 1].end, w.first, ws[j - 1].last, w.cap, w.opens))
        k = j
    return out


def _joined(a, b, text, mark):
    """One word over `a` and `b`."""
    return Word(text, min(a.start, b.start), max(a.end, b.end), min(a.first, b.first), max(a.last, b.last),
                a.cap, a.opens, mark)


def _canonical_number(t):
    """`30.50` is `30.5`, `30.00` is `30`; a sign stays."""
    if re.fullmatch(r'-?[0-9]+\.[0-9]+', t):
        t = t.rstrip('0').rstrip('.')
    return t


def _quantities(ws):
    """Signs, currencies, percentages, temperatures, eras and units made
    part of the number beside them: `[30, usd]` for `$30`, `30 dollars`
    and `USD 30`; `[-5, celsius]` for `minus 5 °C`."""
    # `minus 5`, `negative 5`; then `30.0` as `30`.
    out = []
    for w in ws:
        if out and not out[-1].mark and out[-1].text in ('minus', 'negative') and not w.mark \
                and w.text[:1].isdigit():
            w = _joined(out.pop(), w, '-' + w.text, False)
        out.append(w)
    for w in out:
        if not w.mark and is_number(w.text):
            w.text = _canonical_number(w.text)
    # A currency before a number goes after it.
    ws, out, k = out, [], 0
    while k < len(ws):
        w = ws[k]
        currency = (w.text if w.text in CURRENCIES else None) if w.mark else CURRENCY_WORDS.get(w.text)
        nxt = ws[k + 1] if k + 1 < len(ws) else None
        if currency and nxt is not None and not nxt.mark and is_number(nxt.text) \
                and not (out and not out[-1].mark and is_number(out[-1].text)):
            out.append(nxt)
            out.append(_joined(w, w, currency, True))
            k += 2
            continue
        out.append(w)
        k += 1
    # After a number: its marks and unit, one spelling each.
    ws, out, k = out, [], 0
    while k < len(ws):
        w = ws[k]
        prev = out[-1] if out else None
        nxt = ws[k + 1] if k + 1 < len(ws) else None
        after_number = prev is not None and (prev.mark and prev.text in MARKS or not prev.mark and is_number(prev.text))
        after_digits = prev is not None and not prev.mark and is_number(prev.text)
        if w.mark and w.text == 'degrees' and nxt is not None and not nxt.mark \
                and nxt.text in ('c', 'f', 'celsius', 'centigrade', 'fahrenheit'):
            out.append(_joined(w, nxt, 'fahrenheit' if nxt.text in ('f', 'fahrenheit') else 'celsius', True))
            k += 2
            continue
        if after_number and not w.mark:
            pair = (w.text, nxt.text if nxt is not None and not nxt.mark else None)
            two = {('per', 'cent'): 'percent', ('pounds', 'sterling'): 'gbp'}.get(pair)
            if two is None and w.text in ('degrees', 'degree') and pair[1] in ('celsius', 'centigrade', 'c',
                                                                               'fahrenheit', 'f'):
                two = 'fahrenheit' if pair[1] in ('fahrenheit', 'f') else 'celsius'
            if two is not None:
                out.append(_joined(w, nxt, two, True))
                k += 2
                continue
            one = CURRENCY_WORDS.get(w.text) or {'percent': 'percent', 'pct': 'percent', 'celsius': 'celsius',
                                                 'centigrade': 'celsius', 'fahrenheit': 'fahrenheit',
                                                 'degrees': 'degrees', 'degree': 'degrees'}.get(w.text)
            if one is not None:
                out.append(_joined(w, w, one, True))
                k += 1
                continue
            if after_digits and w.text in ERAS:
                out.append(_joined(w, w, ERAS[w.text], False))
                k += 1
                continue
            if after_digits and w.text in UNIT_WORDS:
                out.append(_joined(w, w, UNIT_WORDS[w.text], False))
                k += 1
                continue
        out.append(w)
        k += 1
    # `$30 dollars`, `$30 CAD`: one mark, the one written last.
    marks = []
    for w in out:
        if marks and w.mark and marks[-1].mark and (marks[-1].text == w.text or
                                                    (marks[-1].text in CURRENCIES and w.text in CURRENCIES)):
            marks[-1] = _joined(marks[-1], w, w.text, True)
            continue
        marks.append(w)
    return marks


def _month(w):
    return None if w.mark else (w.text if w.text in MONTHS else MONTH_SHORT.get(w.text))


def _day(w):
    if w.mark:
        return None
    t = re.fullmatch(r'([0-9]{1,2})(st|nd|rd|th)?', w.text)
    return t.group(1).lstrip('0') if t and 1 <= int(t.group(1)) <= 31 else None


def _dates(ws):
    """Dates as month, day, year: `3 March 1918`, `the 3rd of March, 1918`
    and `March 3rd, 1918` all read `march 3 1918`; `mar`, `sept` are months
    only beside a number."""
    out, k = [], 0
    while k < len(ws):
        w = ws[k]
        d = _day(w)
        j = k + 1
        if d is not None and j < len(ws) and not ws[j].mark and ws[j].text == 'of':
            j += 1
        if d is not None and j < len(ws) and _month(ws[j]) is not None:
            m = ws[j]
            out.append(Word(_month(m), m.start, m.end, m.first, m.last, m.cap, m.opens))
            out.append(Word(d, w.start, w.end, w.first, w.last, w.cap, w.opens))
            k = j + 1
            continue
        m = _month(w)
        nxt = ws[k + 1] if k + 1 < len(ws) else None
        if m is not None and nxt is not None and _day(nxt) is not None:
            out.append(Word(m, w.start, w.end, w.first, w.last, w.cap, w.opens))
            out.append(Word(_day(nxt), nxt.start, nxt.end, nxt.first, nxt.last, nxt.cap, nxt.opens))
            k += 2
            continue
        if m is not None and (w.text in MONTHS or (nxt is not None and not nxt.mark and is_number(nxt.text))):
            out.append(Word(m, w.start, w.end, w.first, w.last, w.cap, w.opens))
            k += 1
            continue
        out.append(w)
        k += 1
    return out


@functools.lru_cache(maxsize=None)
def read(text):
    """The words of `text` as the rule reads them."""
    ws = _raw(unicodedata.normalize('NFC', text))
    ws = [w for w in ws if w.mark or w.text not in ARTICLES]
    return tuple(_dates(_quantities(_number_words(ws))))


def normalise(text):
    return ' '.join(w.text for w in read(text))


def accepted(reference):
    """`Accepted answers: "A"; "B"` gives A and B; any other reference is one answer."""
    r = reference.strip()
    if r.startswith('Accepted answers:'):
        return [a.replace('\\"', '"') for a in re.findall(r'"((?:[^"\\]|\\.)*)"', r)]
    return [r]


# ------------------------------------------------------------------- rule

class Result:
    __slots__ = ('found', 'decided', 'doubt', 'answer')

    def __init__(self, found, decided, doubt=None, answer=None):
        self.found, self.decided, self.doubt, self.answer = found, decided, doubt, answer

    def __repr__(self):
        return f'Result(found={self.found}, decided={self.decided}, doubt={self.doubt})'


def _stem(t):
    return t[:-1] if t.endswith('s') and len(t) > 3 else t


def _unit(t):
    """The unit a word names (`weeks` for `week`), or None."""
    return UNIT_WORDS.get(t)


def occurrences(answer, ws):
    """Where the words `answer` stand one after another among `ws`: index
    ranges. One ending in a number is not found where a mark, an era or a
    magnitude of that number follows it."""
    n = len(answer)
    out = []
    for k in range(len(ws) - n + 1 if n else 0):
        if [w.text for w in ws[k:k + n]] != answer:
            continue
        after = ws[k + n] if k + n < len(ws) else None
        if is_number(answer[-1]) and after is not None and (
                after.mark and after.text in MARKS or not after.mark and (
                after.text in MAGNITUDES or after.text in ERAS.values())):
            continue
        out.append((k, k + n))
    return out


@functools.lru_cache(maxsize=None)
def found_rule(query, reference, response):
    ws = read(response)
    hits = []  # (answer, its words, occurrences)
    for a in accepted(reference):
        words = [w.text for w in read(a)]
        occ = occurrences(words, ws)
        if occ:
            hits.append((a, words, occ))
    if not hits:
        return Result(False, False)
    doubt = _doubt(query, hits, ws, unicodedata.normalize('NFC', response))
    return Result(True, doubt is None, doubt, hits[0][0])


def _doubt(query, hits, ws, text):
    qws = read(query)
    query_words = {_stem(w.text) for w in qws}
    query_texts = {w.text for w in qws}
    # 1. The question holds the answer: finding it proves nothing.
    for a, words, _ in hits:
        if occurrences(words, qws):
            return ('echoes', a)
    inside = set()
    spans = []
    for _, _, occ in hits:
        for s, e in occ:
            inside.update(range(s, e))
            spans.append((ws[s].start, ws[e - 1].end))
    outside = [k for k in range(len(ws)) if k not in inside]
    texts = [w.text for w in ws]
    words = hits[0][1]
    yes_no = words in (['yes'], ['no'])
    # 2. A yes or no opens the answer on its own (`No charge` is no
    # "no"), and its opposite stands nowhere.
    if yes_no:
        after = text[ws[0].end:].lstrip()
        if ws[0].text != words[0] or (after and after[0].isalnum()):
            return ('not_first', words[0])
        other = 'no' if words[0] == 'yes' else 'yes'
        if other in texts:
            return ('opposes', other)
    # 3. A question mark or a quotation mark outside the answer.
    for i, c in enumerate(text):
        if (c == '?' or c in QUOTES) and not any(a <= i < b for a, b in spans):
            return ('questions' if c == '?' else 'quotes', c)
    # 4. Words outside the answer (a limit the question sets is its own).
    name = any(c.isupper() for a, _, _ in hits for c in a)
    for k in outside:
        t = texts[k]
        if ws[k].mark:
            continue
        nxt = texts[k + 1] if k + 1 < len(ws) and not ws[k + 1].mark else ''
        pair = PAIRS.get((t, nxt))
        if pair is not None and k + 1 not in inside and not (pair == 'qualifies' and t in query_words):
            return (pair, t + ' ' + nxt)
        if t == 'may' and not ((k > 0 and is_number(texts[k - 1])) or is_number(nxt)):
            return ('hedges', t)
        if t in ('c', 'ca') and is_number(nxt):
            return ('hedges', t)
        for kind, table in CLASSES:
            if t not in table:
                continue
            if kind == 'denies' and words == ['no'] and t in PLAIN_NEGATIONS:
                continue
            if kind == 'qualifies' and _stem(t) in query_words:
                continue
            return (kind, t)
        if name and t in RELATES:
            return ('relates', t)
    # 5. What follows the answer: `'s` (something of it), `is the year …`
    # (it names the value of something else), a unit the question lacks
    # after a number (`$12 a week`: a rate, another measure).
    numeric = any(is_number(t) for _, w, _ in hits for t in w)
    query_units = {_unit(t) for t in query_texts}
    for _, _, occ in hits:
        for s, e in occ:
            after = ws[e] if e < len(ws) and not ws[e].mark else None
            if after is None:
                continue
            if after.text == 's':
                return ('possessive', "'s")
            if after.text in COPULAS and e + 1 < len(ws) and not ws[e + 1].mark \
                    and ws[e + 1].text in DESCRIBED and _stem(ws[e + 1].text) not in query_words:
                return ('describes', after.text + ' ' + ws[e + 1].text)
            if numeric and _unit(after.text) and _stem(after.text) not in query_words \
                    and _unit(after.text) not in query_units:
                return ('qualifies', after.text)
    # 6. Another value of the answer's kind.
    if numeric or yes_no:
        months = any(t in MONTHS for _, w, _ in hits for t in w)
        for k in outside:
            t = texts[k]
            if ws[k].mark:
                continue
            if is_number(t) and t not in query_texts:
                return ('another_number', t)
            if months and t in MONTHS and t not in query_texts:
                return ('another_number', t)
        if numeric:
            return None
    if name:
        for _, _, occ in hits:
            for s, e in occ:
                if e < len(ws) and not ws[e].mark and texts[e] in NAME_AFTER and _stem(texts[e]) not in query_words:
                    return ('another_name', texts[e])
                if s > 0 and not ws[s - 1].mark and texts[s - 1] in NAME_BEFORE \
                        and _stem(texts[s - 1]) not in query_words:
                    return ('another_name', texts[s - 1])
    if yes_no or (name and any(c.isupper() for c in text)):
        for k in outside:
            w = ws[k]
            if w.cap and not w.mark and not is_number(w.text) and _stem(w.text) not in query_words \
                    and not (w.opens and w.text in SMALL) and w.text != 'i':
                return ('another_name', w.text)
        if yes_no:
            # What follows a yes or no is about the question: one of its
            # words, where it says anything (`Yes, and pigs fly` is not).
            said = [ws[k] for k in outside if not ws[k].mark and ws[k].text not in SMALL]
            if said and not any(_stem(w.text) in query_words for w in said):
                return ('beside', said[0].text)
        return None
    for k in outside:
        w = ws[k]
        if not w.mark and w.text not in SMALL and _stem(w.text) not in query_words:
            return ('beside', w.text)
    return None


def plain_match(reference, response):
    """The baseline: an accepted answer found as whole words, whatever else the response says."""
    return found_rule('', reference, response).found
