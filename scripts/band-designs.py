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
# One source each (ours): bands chosen on the dev half, no held-out source.
RELEVANCE_SETS = {'ours': ['tests/labelled_relevance/{h}']}
PASSAGE_SETS = {'ours': ['tests/labelled_passages/{h}']}
SETS = {'claims': CLAIM_SETS, 'correctness': CORRECTNESS_SETS, 'criteria': CRITERIA_SETS,
        'relevance': RELEVANCE_SETS, 'passages': PASSAGE_SETS}
# What kind of reference each correctness source has (issue 42's targets differ).
REFERENCE_KIND = {'openqa': 'short', 'liveqa-med': 'long', 'truthfulqa': 'sentence',
                  'roscoe-gsm8k': 'long', 'ours': 'sentence'}
# Relevance and passages: the thresholds of tests/judges/qwen15.toml.
THRESHOLD = {'claims': 0.33, 'correctness': 0.5, 'criteria': 0.45, 'relevance': 0.47, 'passages': 0.414}
DESIGN = {'claims': 'sup', 'correctness': 'direct', 'criteria': 'met', 'relevance': 'rel', 'passages': 'pas'}
POSITIVE = {'claims': ('supported',), 'correctness': ('correct',), 'criteria': ('meets',), 'relevance': ('relevant',),
            'passages': ('relevant',)}


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
# The rule ragaliq ships is ported in scripts/found_rule.py (its words in
# ragaliq/src/evidence/answer/words.txt, its cases in
# tests/fixtures/answer_found.json, both read by the Rust rule too).
# `found_rule` below is that rule; `found_rule_v1` the one it replaced
# (issue 42, until issue 49), kept for the before column of `found`: the
# response cut into clauses (at . ! ? ; : , and dashes, except a . , or :
# between two digits), an accepted answer found where its normalised words
# stand consecutively, an occurrence negated when a clause it touches holds
# a negation cue, the answer decided when some occurrence is not negated.
import found_rule as FOUND  # noqa: E402

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
def found_rule_v1(reference, response):
    """The rule before issue 49: (found, negated, what). The response's normalised words in order, each
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


def found_rule(query, reference, response):
    """The shipped rule (scripts/found_rule.py): (found, decided, what)."""
    r = FOUND.found_rule(query or '', reference, response)
    what = ('not found' if not r.found else
            f'found «{r.answer}», decided' if r.decided else f'found «{r.answer}», {r.doubt[0]} «{r.doubt[1]}»')
    return r.found, r.decided, what


def plain_match(reference, response):
    """The baseline: an accepted answer found as whole words, whatever else the response says."""
    return FOUND.plain_match(reference, response)


# ------------------------------------------- answers in committed recordings

TASK_DESIGN = {'claim_supported': 'sup', 'claim_contradicted': 'con', 'answer_correct': 'direct', 'criteria_met': 'met',
               'answers_query': 'rel', 'passage_relevant': 'pas'}
TASK_KIND = {'claim_supported': 'claims', 'claim_contradicted': 'claims', 'answer_correct': 'correctness', 'criteria_met': 'criteria',
             'answers_query': 'relevance', 'passage_relevant': 'passages'}


def item_key(kind, it):
    s = lambda x: (x or '').strip()
    if kind == 'claims':
        return (s(it['claim']), tuple(s(p) for p in it.get('passages') or []))
    if kind == 'correctness':
        return (s(it['query']), s(it.get('reference') or it.get('expected')), s(it['response']))
    if kind == 'relevance':
        return (s(it['query']), s(it['response']))
    if kind == 'passages':
        ps = it.get('passages') or [it.get('passage')]
        return (s(it['query']), tuple(s(p) for p in ps))
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
        if kind in ('claims', 'passages'):
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


# ----------------------------------------------------------------- readings

def _script(name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name.replace('-', '_'), os.path.join(HERE, name + '.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@functools.lru_cache(maxsize=None)
def askers():
    return _script('verdict-designs'), _script('correctness-designs')


def prompt_key(kind, model, it):
    """The cache key the asking scripts give this item's question now (so a
    cached answer to an older text of the item is never read)."""
    vd, cd = askers()
    if kind == 'claims':
        msgs, mt = vd.DESIGNS['sup'](it)
        return vd.key(model, msgs, mt)
    if kind == 'correctness':
        return cd.key(model, cd.q_direct(it), 3)
    return cd.key(model, cd.q_met(it), 3)


CACHES = {
    'claims': ['bench/designs/{m}.jsonl'],
    'correctness': ['bench/designs/correctness-{m}.jsonl'],
    'criteria': ['bench/designs/correctness-{m}.jsonl'],
}
RECORDED = ['bench/bands/recorded-{m}.jsonl', 'bench/designs/recorded-{m}.jsonl']


@functools.lru_cache(maxsize=None)
def readings(kind, model):
    """id -> {p, secs, load, chars, origin} for every item of the kind with an
    answer: from a committed recording where there is one (what ragaliq
    replays), else from the asking scripts' cache (the answer to the item's
    exact question)."""
    design = DESIGN[kind]
    rec = {}
    for pat in RECORDED:
        path = os.path.join(ROOT, pat.format(m=model))
        if not os.path.exists(path):
            continue
        for line in open(path, encoding='utf-8'):
            e = json.loads(line)
            if e['design'] == design and e['model'] == model:
                rec.setdefault(e['ids'][0], e)
    cache = {}
    for pat in CACHES.get(kind, []):
        path = os.path.join(ROOT, pat.format(m=model))
        if not os.path.exists(path):
            continue
        for line in open(path, encoding='utf-8'):
            e = json.loads(line)
            if e['design'] == design and e['model'] == model:
                cache[e['key']] = e
    out = {}
    for it in load(kind):
        e = rec.get(it['id'])
        origin = 'recording'
        if e is None and kind in CACHES:
            e = cache.get(prompt_key(kind, model, it))
            origin = 'cache'
        if e is None:
            continue
        out[it['id']] = {'p': p_yes(e), 'secs': e.get('secs'), 'load': e.get('load'), 'chars': e.get('chars'),
                         'origin': origin}
    return out


# ------------------------------------------------------------------ figures

def kappa(pairs):
    """Cohen's kappa of [(person, judge)] booleans; None where undefined (no
    pair, or both sides one and the same class: chance agreement is 1)."""
    n = len(pairs)
    if n == 0:
        return None
    po = sum(a == b for a, b in pairs) / n
    pp = sum(a for a, _ in pairs) / n
    pj = sum(b for _, b in pairs) / n
    pe = pp * pj + (1 - pp) * (1 - pj)
    if pe >= 1 - 1e-12:
        return None
    return (po - pe) / (1 - pe)


def auc(scored):
    pos = [s for s, y in scored if y]
    neg = [s for s, y in scored if not y]
    if not pos or not neg:
        return None
    return sum((a > b) + 0.5 * (a == b) for a in pos for b in neg) / (len(pos) * len(neg))


NEVER = 'never'


def band_name(b):
    if b == NEVER:
        return 'never decided'
    lo, hi = b
    if abs(lo - hi) < 1e-12:
        return f'none at {lo:g} (today)'
    return f'[{lo:g}, {hi:g})'


def grid(t):
    steps = [round(0.025 * i, 3) for i in range(41)]
    los = sorted(set([x for x in steps if x < t - 1e-9] + [t]))
    his = sorted(set([t] + [x for x in steps if x > t + 1e-9]))
    return [(lo, hi) for lo in los for hi in his] + [NEVER]


def decide(band, p):
    """True (decided yes), False (decided no) or None (uncertain)."""
    if band == NEVER or p is None:
        return None
    lo, hi = band
    if p >= hi:
        return True
    if p < lo:
        return False
    return None


class Cell:
    """One source's half for one kind and model: its items with a reading,
    what people said, the judge's P, the found rule (correctness)."""

    def __init__(self, kind, model, source, half):
        self.kind, self.source, self.half, self.model = kind, source, half, model
        rd = readings(kind, model)
        its = [it for it in load(kind) if it['source'] == source and it['half'] == half]
        self.n_labelled = len(its)
        self.items = [it for it in its if it['id'] in rd]
        self.people = [positive(kind, it) for it in self.items]
        self.p = [rd[it['id']]['p'] for it in self.items]
        self.secs = [rd[it['id']]['secs'] for it in self.items]
        self.load = [rd[it['id']]['load'] for it in self.items]
        self.origin = [rd[it['id']]['origin'] for it in self.items]
        if kind == 'correctness':
            self.found = [found_rule(it.get('query'), it['reference'], it['response'])[1] for it in self.items]
            self.plain = [plain_match(it['reference'], it['response']) for it in self.items]
        else:
            self.found = [False] * len(self.items)
            self.plain = None
        self.auc = auc([(p, y) for p, y in zip(self.p, self.people) if p is not None])
        self.unreadable = sum(p is None for p in self.p)

    def __len__(self):
        return len(self.items)

    def verdicts(self, band, separable=True):
        out = []
        for p, f in zip(self.p, self.found):
            if f:
                out.append(True)
            elif not separable:
                out.append(None)
            else:
                out.append(decide(band, p))
        return out

    def figures(self, band, separable=True):
        v = self.verdicts(band, separable)
        pairs = [(y, d) for y, d in zip(self.people, v) if d is not None]
        n = len(self.items)
        k = kappa(pairs)
        acc = sum(a == b for a, b in pairs) / len(pairs) if pairs else None
        f = {'n': n, 'decided': len(pairs), 'coverage': len(pairs) / n if n else 0.0, 'acc': acc, 'kappa': k,
             'found': sum(self.found), 'calls': sum(not x for x in self.found) / n if n else 0.0,
             'wrong': sum(a != b for a, b in pairs)}
        # Each side on its own (issue 47): decided yes, decided no.
        for side, val in (('yes', True), ('no', False)):
            ps = [(y, d) for y, d in pairs if d is val]
            f[side + '_n'] = len(ps)
            f[side + '_wrong'] = sum(y != d for y, d in ps)
            f[side + '_acc'] = (len(ps) - f[side + '_wrong']) / len(ps) if ps else None
        return f

    def at_threshold(self, t):
        """Today's reading: every item decided by the threshold (found first for correctness)."""
        v = self.verdicts((t, t))
        pairs = [(y, d) for y, d in zip(self.people, v) if d is not None]
        return {'kappa': kappa(pairs), 'acc': sum(a == b for a, b in pairs) / len(pairs) if pairs else None}

    def plain_figures(self):
        if self.plain is None:
            return None
        pairs = list(zip(self.people, self.plain))
        return {'kappa': kappa(pairs), 'acc': sum(a == b for a, b in pairs) / len(pairs) if pairs else None}


ACC_MIN, KAPPA_MIN, AUC_MIN = 0.9, 0.75, 0.7


def rule():
    """The requirement bands are chosen under: `sides` (issue 47, the
    default: each side's decided accuracy >= 0.9 on its own, on every
    source), `sides-separable` (the same, sources the judge cannot separate
    on their dev half left out of the choice), `strict` (issues 40 and 42:
    decided accuracy >= 0.9 and decided kappa >= 0.75 on every source), or
    `separable` (strict, sources the judge cannot separate left out)."""
    return os.environ.get('BANDS_RULE', 'sides')


def meets(f):
    """The choice's requirement on one source. Under `sides`: each side
    that decides anything (decided yes, decided no) has decided accuracy >=
    0.9 on its own. Under `strict`: decided accuracy >= 0.9 and decided
    kappa >= 0.75; nothing decided meets it (no wrong decision); a decided
    set in one class that people and judge agree on entirely (kappa
    undefined, accuracy 1) meets it."""
    if rule().startswith('sides'):
        return all(f[s + '_acc'] is None or f[s + '_acc'] >= ACC_MIN for s in ('yes', 'no'))
    if f['decided'] == 0:
        return True
    if f['kappa'] is None:
        return f['acc'] == 1.0
    return f['acc'] >= ACC_MIN and f['kappa'] >= KAPPA_MIN


def separable(cell):
    """Criteria: the judge can separate a source when its AUC on the source's
    dev half is at least 0.7 (issue 42); otherwise nothing is decided there."""
    return cell.kind != 'criteria' or (cell.auc is not None and cell.auc >= AUC_MIN)


@functools.lru_cache(maxsize=None)
def cells(kind, model):
    return {(s, h): Cell(kind, model, s, h) for s in SETS[kind] for h in ('dev', 'test')}


def sources_of(kind, model):
    cs = cells(kind, model)
    return [s for s in SETS[kind] if len(cs[(s, 'dev')]) and len(cs[(s, 'test')])]


def choose(kind, model, over):
    """The band with the largest mean coverage over `over`'s dev halves such
    that every one of them meets the requirement; ties: the narrower band,
    then the one centred nearer the threshold. Sources the judge cannot
    separate (criteria) decide nothing whatever the band and are left out of
    both the requirement and the mean. Returns (band, mean coverage, feasible?)."""
    cs = cells(kind, model)
    t = THRESHOLD[kind]
    devs = [cs[(s, 'dev')] for s in over]
    devs = [c for c in devs if separable(c) and chosen_over(c)]
    if not devs:
        # No source to show any band agrees with people (criteria the judge
        # cannot separate anywhere): nothing is decided.
        return NEVER, 0.0, False
    best = None
    for b in grid(t):
        fs = [c.figures(b) for c in devs]
        if not all(meets(f) for f in fs):
            continue
        cov = sum(f['coverage'] for f in fs) / len(fs) if fs else 0.0
        width = 9 if b == NEVER else b[1] - b[0]
        centre = 9 if b == NEVER else abs((b[0] + b[1]) / 2 - t)
        score = (round(cov, 9), -round(width, 9), -round(centre, 9))
        if best is None or score > best[0]:
            best = (score, b, cov)
    if best is None:
        return NEVER, 0.0, False
    return best[1], best[2], best[1] != NEVER


def chosen_over(cell):
    """Under BANDS_RULE=separable or sides-separable (variants, reported
    beside the rules shipped), a source whose dev AUC is under 0.7 is left
    out of the requirement for every kind, not only criteria; it is still
    read at the chosen band when held out, as the product would read it."""
    if rule() not in ('separable', 'sides-separable'):
        return True
    return cell.auc is not None and cell.auc >= AUC_MIN


def dev_separable(kind, model, source):
    return separable(cells(kind, model)[(source, 'dev')])


# ------------------------------------------------------------------- report

MODELS = ('qwen15', 'qwen05')
MODEL_NAME = {'qwen15': 'Qwen2.5-Coder-1.5B', 'qwen05': 'Qwen2.5-Coder-0.5B'}


def fmt(x, nd=3):
    return '–' if x is None else f'{x:.{nd}f}'


def pct(x):
    return '–' if x is None else f'{100 * x:.0f}%'


def loso(kind, model):
    """For each held-out source: the band chosen on the other sources' dev
    halves, and the held-out test half's figures at it."""
    cs = cells(kind, model)
    srcs = sources_of(kind, model)
    rows = []
    for s in srcs:
        band, cov, feasible = choose(kind, model, [o for o in srcs if o != s])
        test = cs[(s, 'test')]
        sep = dev_separable(kind, model, s)
        f = test.figures(band, separable=sep)
        rows.append({'source': s, 'band': band, 'dev_coverage': cov, 'feasible': feasible, 'separable': sep,
                     'fig': f, 'at_t': test.at_threshold(THRESHOLD[kind]), 'plain': test.plain_figures(),
                     'auc_dev': cs[(s, 'dev')].auc, 'n': len(test)})
    return rows


@functools.lru_cache(maxsize=None)
def default_band(kind, model):
    return choose(kind, model, tuple(sources_of(kind, model)))


def pooled_default(kind):
    """What a judge we have not measured gets: the same rule over every kit
    model's and source's dev halves at once (a band that held for every judge
    measured)."""
    t = THRESHOLD[kind]
    devs = []
    for m in MODELS:
        for s in sources_of(kind, m):
            c = cells(kind, m)[(s, 'dev')]
            if separable(c) and chosen_over(c):
                devs.append(c)
    if not devs:
        return NEVER, 0.0
    best = None
    for b in grid(t):
        fs = [c.figures(b) for c in devs]
        if not all(meets(f) for f in fs):
            continue
        cov = sum(f['coverage'] for f in fs) / len(fs) if fs else 0.0
        width = 9 if b == NEVER else b[1] - b[0]
        centre = 9 if b == NEVER else abs((b[0] + b[1]) / 2 - t)
        score = (round(cov, 9), -round(width, 9), -round(centre, 9))
        if best is None or score > best[0]:
            best = (score, b, cov)
    return (best[1], best[2]) if best else (NEVER, 0.0)


# What ships where the rule's choice does not (issue 47), and why.
SHIPPED_INSTEAD = {
    'correctness': (NEVER, 'the rule\'s band decides 1 of 2 answers of ours wrong held out (and 1 of 1 on its test half at '
                           'the default), and what reaches the band depends on the found rule, which issue 49 redesigns in '
                           'parallel: the correctness band is chosen again once it lands. Until then an answer whose reference '
                           'is not found awaits a person, as before.'),
}

# The starting band of a judge nothing was measured for (`Band::Unmeasured`):
# decide where the judge itself is at least 95% sure. Not chosen by the
# rule: fixed in advance, and checked on every kit model's source and half.
UNMEASURED = (0.05, 0.95)


def unmeasured_table(kind):
    """The unmeasured band read on both kit models' sources, both halves:
    each side's decided accuracy (it must be at least 0.9 wherever it decides)."""
    t = THRESHOLD[kind]
    b = (min(UNMEASURED[0], t), max(UNMEASURED[1], t))
    out = [f'\n### {kind}: the starting band of a judge not measured here: **{band_name(UNMEASURED)}** (unmeasured: where the judge itself is at least 95% sure), read on both kit models\n',
           '| model | source | half | n | coverage | decided yes: n, acc | decided no: n, acc |', '| --- | --- | --- | --- | --- | --- | --- |']
    for m in MODELS:
        for s in SETS[kind]:
            for h in ('dev', 'test'):
                c = cells(kind, m)[(s, h)]
                if not len(c):
                    continue
                f = c.figures(b)
                out.append(f'| {m} | {s} | {h} | {len(c)} | {pct(f["coverage"])} | {f["yes_n"]}, {fmt(f["yes_acc"])} | {f["no_n"]}, {fmt(f["no_acc"])} |')
    if kind == 'correctness':
        out.append('\n(Correctness\'s decided yes include the found rule\'s, decided with no call whatever the band.)')
    return '\n'.join(out) + '\n'


def cascade(kind, source, bands, half='test'):
    """0.5B then 1.5B, each at its band, over the items both were asked: who
    decided what, how well, and the 1.5B alone on the same items."""
    c05, c15 = cells(kind, 'qwen05')[(source, half)], cells(kind, 'qwen15')[(source, half)]
    i05 = {it['id']: k for k, it in enumerate(c05.items)}
    sep05 = dev_separable(kind, 'qwen05', source)
    sep15 = dev_separable(kind, 'qwen15', source)
    v15 = c15.verdicts(bands['qwen15'], sep15)
    v05 = c05.verdicts(bands['qwen05'], sep05)
    found = stage1 = stage2 = n = calls = 0
    pairs, alone = [], []
    for k, it in enumerate(c15.items):
        if it['id'] not in i05:
            continue
        n += 1
        y = c15.people[k]
        if v15[k] is not None:
            alone.append((y, v15[k]))
        if c15.found[k]:
            found += 1
            pairs.append((y, True))
            continue
        d05 = v05[i05[it['id']]]
        calls += 1
        if d05 is not None:
            stage1 += 1
            pairs.append((y, d05))
            continue
        calls += 1
        if v15[k] is not None:
            stage2 += 1
            pairs.append((y, v15[k]))

    def figs(ps):
        return {'coverage': len(ps) / n if n else 0.0, 'acc': sum(a == b for a, b in ps) / len(ps) if ps else None,
                'kappa': kappa(ps), 'wrong': sum(a != b for a, b in ps)}
    f = figs(pairs)
    return {'n': n, 'found': found, 'by05': stage1, 'by15': stage2, 'uncertain': n - found - stage1 - stage2,
            'acc': f['acc'], 'kappa': f['kappa'], 'coverage': f['coverage'], 'wrong': f['wrong'],
            'calls': calls / n if n else 0.0, 'alone': figs(alone)}


def timing(kind, model):
    """Seconds per answer asked (cached answers with timing), and the load."""
    rows = {}
    for s in SETS[kind]:
        for h in ('dev', 'test'):
            c = cells(kind, model)[(s, h)]
            secs = [x for x, o in zip(c.secs, c.origin) if x is not None and o == 'cache']
            loads = [x for x, o in zip(c.load, c.origin) if x is not None and o == 'cache']
            rec = sum(o == 'recording' for o in c.origin)
            rows[(s, h)] = (len(c), c.n_labelled, rec, secs, loads)
    return rows


def median(xs):
    xs = sorted(xs)
    if not xs:
        return None
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2


def report(kinds=('claims', 'correctness', 'criteria', 'relevance', 'passages')):
    out = []
    w = out.append
    defaults = {m: {} for m in MODELS}
    defaults['default'] = {}
    targets = []
    for kind in kinds:
        t = THRESHOLD[kind]
        w(f'\n## {kind.capitalize()} (threshold {t:g})\n')
        if len(SETS[kind]) == 1:
            w('One source only (ours): the band is chosen on its dev half and read on its test half; '
              'there is no held-out source, so no leave-one-source-out figure.\n')
        # What was read
        w(f'### {kind}: items read (with a reading) of the items labelled, and where the answers come from\n')
        w('| source | half | ' + ' | '.join(f'{m}: read / labelled (from recordings)' for m in MODELS) + ' |')
        w('| --- | --- | ' + ' | '.join('---' for _ in MODELS) + ' |')
        for s in SETS[kind]:
            for h in ('dev', 'test'):
                row = []
                for m in MODELS:
                    c = cells(kind, m)[(s, h)]
                    rec = sum(o == 'recording' for o in c.origin)
                    row.append(f'{len(c)} / {c.n_labelled} ({rec})' + (f', {c.unreadable} unreadable' if c.unreadable else ''))
                w(f'| {s} | {h} | ' + ' | '.join(row) + ' |')
        w(f'\n### {kind}: AUC of the judge\'s P per source\n')
        w('| source | ' + ' | '.join(f'{m} dev | {m} test' for m in MODELS) + ' |')
        w('| --- | ' + ' | '.join('--- | ---' for _ in MODELS) + ' |')
        for s in SETS[kind]:
            row = []
            for m in MODELS:
                for h in ('dev', 'test'):
                    c = cells(kind, m)[(s, h)]
                    row.append(fmt(c.auc) + ('' if kind != 'criteria' or h != 'dev' or c.auc is None or c.auc >= AUC_MIN else ' (cannot separate)'))
            w(f'| {s} | ' + ' | '.join(row) + ' |')
        for m in MODELS:
            srcs = sources_of(kind, m)
            rows = loso(kind, m) if len(srcs) >= 2 else []
            if not rows:
                w(f'\n**{m}: fewer than two sources with both halves read; no leave-one-source-out.**\n')
            if rows:
                w(f'\n### {kind}, {m}: leave one source out (band chosen on the other sources\' dev halves, read on the held-out test half)\n')
                head = '| held out | band chosen | others\' dev coverage | test n | coverage | decided acc | decided yes: n, acc | decided no: n, acc | decided kappa | wrong decided | all items at t: acc / kappa |'
                sep = '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |'
                if kind == 'correctness':
                    head += ' plain matching: acc / kappa | found (no call) | calls / answer |'
                    sep += ' --- | --- | --- |'
                if kind == 'criteria':
                    head += ' dev AUC |'
                    sep += ' --- |'
                w(head)
                w(sep)
                for r in rows:
                    f = r['fig']
                    band = band_name(r['band']) + ('' if r['feasible'] or r['band'] != NEVER else ' (no band met the rule)')
                    if kind == 'criteria' and not r['separable']:
                        band += '; cannot separate: nothing decided'
                    line = (f'| {r["source"]} | {band} | {pct(r["dev_coverage"])} | {r["n"]} | {pct(f["coverage"])} | {fmt(f["acc"])} | '
                            f'{f["yes_n"]}, {fmt(f["yes_acc"])} | {f["no_n"]}, {fmt(f["no_acc"])} | {fmt(f["kappa"])} | {f["wrong"]} | {fmt(r["at_t"]["acc"])} / {fmt(r["at_t"]["kappa"])} |')
                    if kind == 'correctness':
                        line += f' {fmt(r["plain"]["acc"])} / {fmt(r["plain"]["kappa"])} | {f["found"]} | {f["calls"]:.2f} |'
                    if kind == 'criteria':
                        line += f' {fmt(r["auc_dev"])} |'
                    w(line)
                decided = [r for r in rows if r['fig']['decided']]
                if decided:
                    wa = min(decided, key=lambda r: r['fig']['acc'])
                    wk = min(decided, key=lambda r: -9 if r['fig']['kappa'] is None else r['fig']['kappa'])
                    w(f'\nWorst held-out source: decided accuracy {fmt(wa["fig"]["acc"])} ({wa["source"]}); decided kappa '
                      f'{fmt(wk["fig"]["kappa"])} ({wk["source"]}); sources with nothing decided: '
                      f'{", ".join(r["source"] for r in rows if not r["fig"]["decided"]) or "none"}.')
                    if kind in ('claims', 'correctness') and m == 'qwen15':
                        ok = all(r['fig']['acc'] >= ACC_MIN for r in decided) and all(r['fig']['kappa'] is not None and r['fig']['kappa'] >= KAPPA_MIN for r in decided)
                        targets.append((f'Issue 40, {kind}, 1.5B, leave one source out: decided accuracy >= 0.9 and kappa >= 0.75 on the worst held-out source',
                                        'met' if ok else 'missed',
                                        f'worst accuracy {fmt(wa["fig"]["acc"])} ({wa["source"]}), worst kappa {fmt(wk["fig"]["kappa"])} ({wk["source"]})'
                                        + (f'; nothing decided on {", ".join(r["source"] for r in rows if not r["fig"]["decided"])}' if len(decided) < len(rows) else '')))
                else:
                    w('\nNothing decided on any held-out source.')
                    if kind in ('claims', 'correctness') and m == 'qwen15':
                        targets.append((f'Issue 40, {kind}, 1.5B, leave one source out', 'missed', 'nothing decided on any held-out source'))
            # The default: the same rule over every source's dev half
            band, cov, feasible = default_band(kind, m)
            defaults[m][kind] = SHIPPED_INSTEAD.get(kind, (band,))[0] if rule().startswith('sides') else band
            w(f'\n### {kind}, {m}: the default band, chosen on every source\'s dev half: **{band_name(band)}** (mean dev coverage {pct(cov)})\n')
            if rule().startswith('sides') and kind in SHIPPED_INSTEAD:
                w(f'Shipped instead: **{band_name(SHIPPED_INSTEAD[kind][0])}**: {SHIPPED_INSTEAD[kind][1]}\n')
            head = '| source | half | n | coverage | decided acc | decided kappa | wrong decided | all items at t (today): acc / kappa |'
            sep = '| --- | --- | --- | --- | --- | --- | --- | --- |'
            if kind == 'correctness':
                head += ' plain matching: acc / kappa | calls / answer |'
                sep += ' --- | --- |'
            w(head)
            w(sep)
            for s in srcs:
                for h in ('dev', 'test'):
                    c = cells(kind, m)[(s, h)]
                    sepa = dev_separable(kind, m, s)
                    f = c.figures(band, separable=sepa)
                    at = c.at_threshold(t)
                    line = (f'| {s} | {h} | {len(c)} | {pct(f["coverage"])}{"" if sepa else " (cannot separate)"} | {fmt(f["acc"])} | {fmt(f["kappa"])} | '
                            f'{f["wrong"]} | {fmt(at["acc"])} / {fmt(at["kappa"])} |')
                    if kind == 'correctness':
                        pl = c.plain_figures()
                        line += f' {fmt(pl["acc"])} / {fmt(pl["kappa"])} | {f["calls"]:.2f} |'
                    w(line)
                    if m == 'qwen15' and h == 'test' and kind == 'correctness':
                        rk = REFERENCE_KIND[s]
                        if rk == 'short':
                            ok = at['acc'] is not None and at['acc'] >= pl['acc'] and f['kappa'] is not None and f['kappa'] >= 0.85
                            targets.append((f'Issue 42, correctness, 1.5B at the default band, {s} test (short references): all-items agreement >= plain matching\'s and decided kappa >= 0.85',
                                            'met' if ok else 'missed',
                                            f'all-items accuracy {fmt(at["acc"])} vs plain matching {fmt(pl["acc"])}; decided kappa {fmt(f["kappa"])} at coverage {pct(f["coverage"])}'))
                        else:
                            ok = f['kappa'] is not None and f['kappa'] >= 0.6
                            targets.append((f'Issue 42, correctness, 1.5B at the default band, {s} test ({rk} references): decided kappa >= 0.6',
                                            'met' if ok else 'missed', f'decided kappa {fmt(f["kappa"])} at coverage {pct(f["coverage"])}'))
                    if m == 'qwen15' and h == 'test' and kind == 'criteria':
                        if sepa:
                            ok = f['kappa'] is not None and f['kappa'] >= 0.6
                            targets.append((f'Issue 42, criteria, 1.5B at the default band, {s} test (separable): decided kappa >= 0.6',
                                            'met' if ok else 'missed', f'decided kappa {fmt(f["kappa"])} at coverage {pct(f["coverage"])}'))
                        else:
                            targets.append((f'Issue 42, criteria, 1.5B, {s}', 'named', f'cannot separate (dev AUC {fmt(cells(kind, m)[(s, "dev")].auc)}): nothing decided'))
        # The unknown judge
        if rule().startswith('sides'):
            defaults['default'][kind] = UNMEASURED
            w(unmeasured_table(kind))
        else:
            pb, pcov = pooled_default(kind)
            defaults['default'][kind] = pb
            w(f'\n### {kind}: the band for a judge not measured here: **{band_name(pb)}** (the same rule over both kit models\' dev halves at once; mean dev coverage {pct(pcov)})\n')
        # Cascade
        if all(len(sources_of(kind, m)) >= 1 for m in MODELS):
            variants = [('default bands', lambda s: {m: default_band(kind, m)[0] for m in MODELS})]
            if all(len(sources_of(kind, m)) >= 2 for m in MODELS):
                variants.append(('bands chosen without the held-out source',
                                 lambda s: {m: choose(kind, m, [o for o in sources_of(kind, m) if o != s])[0] for m in MODELS}))
            for label, bands_of in variants:
                w(f'\n### {kind}: the cascade 0.5B -> 1.5B on the test halves, {label}\n')
                w('| source | n (asked of both) | ' + ('found (no call) | ' if kind == 'correctness' else '') + 'decided by 0.5B | decided by 1.5B | uncertain | cascade: coverage, acc, kappa, wrong | 1.5B alone, same items: coverage, acc, kappa, wrong | cascade calls / answer |')
                w('| --- | --- | ' + ('--- | ' if kind == 'correctness' else '') + '--- | --- | --- | --- | --- | --- |')
                for s in SETS[kind]:
                    if s not in sources_of(kind, 'qwen15') or s not in sources_of(kind, 'qwen05'):
                        continue
                    r = cascade(kind, s, bands_of(s))
                    a = r['alone']
                    w(f'| {s} | {r["n"]} | ' + (f'{r["found"]} | ' if kind == 'correctness' else '') +
                      f'{r["by05"]} | {r["by15"]} | {r["uncertain"]} | {pct(r["coverage"])}, {fmt(r["acc"])}, {fmt(r["kappa"])}, {r["wrong"]} | '
                      f'{pct(a["coverage"])}, {fmt(a["acc"])}, {fmt(a["kappa"])}, {a["wrong"]} | {r["calls"]:.2f} |')
        # Time
        w(f'\n### {kind}: seconds per answer asked for this round and before (answers from recordings carry no time)\n')
        w('| model | source | half | answers timed | median s | mean s | load average while asked (median) |')
        w('| --- | --- | --- | --- | --- | --- | --- |')
        for m in MODELS:
            for (s, h), (n, nl, rec, secs, loads) in timing(kind, m).items():
                if secs:
                    w(f'| {m} | {s} | {h} | {len(secs)} | {fmt(median(secs), 2)} | {fmt(sum(secs) / len(secs), 2)} | {fmt(median(loads), 1) if loads else "not recorded"} |')
    w('\n## The newcomer crate\'s six tests (`/work/shared/newcomer`, its committed 1.5B recordings)\n')
    sets = [('today (lo = hi = t)', {'claims': (0.33, 0.33), 'correctness': (0.5, 0.5)}),
            ('1.5B default bands', {'claims': defaults['qwen15'].get('claims', NEVER), 'correctness': defaults['qwen15'].get('correctness', NEVER)}),
            ('unknown-judge bands', {'claims': defaults['default'].get('claims', NEVER), 'correctness': defaults['default'].get('correctness', NEVER)})]
    w('Bands: ' + '; '.join(f'{n}: claims {band_name(b["claims"])}, correctness {band_name(b["correctness"])}' for n, b in sets) + '.\n')
    w(newcomer_table(sets))
    w('\n## Targets, said plainly\n')
    w('| target | result | figures |')
    w('| --- | --- | --- |')
    for name, res, fig in targets:
        w(f'| {name} | **{res}** | {fig} |')
    return '\n'.join(out), defaults


# --------------------------------------------------------- the newcomer's six

NEWCOMER = '/work/shared/newcomer/shop/tests/snapshots'
# What each of its tests asserts (tests/returns.rs), and whether its answer is right.
NEWCOMER_TESTS = [
    ('return_window_paraphrased', 'right', [('faithfulness', 'pass')]),
    ('refund_timing_correct', 'right', [('faithfulness', 'pass'), ('hallucination', 'pass')]),
    ('invented_store_credit_is_caught', 'wrong', [('faithfulness', 'caught')]),
    ('invented_free_pickup_is_caught', 'wrong', [('faithfulness', 'caught')]),
    ('correct_against_reference', 'right', [('correctness', 'pass')]),
    ('wrong_against_reference_is_caught', 'wrong', [('correctness', 'caught')]),
]
METRIC_THRESHOLD = {'faithfulness': 0.7, 'hallucination': 0.8, 'correctness': 0.5}


def newcomer_readings(name):
    path = os.path.join(NEWCOMER, f'returns__{name}.snap')
    rec = miniyaml.load_snapshot(open(path, encoding='utf-8').read())
    sup, con, correct = {}, {}, None
    for ex in rec.get('exchanges') or []:
        task = ex.get('task')
        if task not in TASK_DESIGN:
            continue
        tokens = [(t['token'], t['logprob'], sorted((t.get('top') or {}).items(), key=lambda x: -x[1]))
                  for t in ex.get('probabilities') or []]
        r = answer_word(ex.get('reply') or '', tokens)
        p = None if r is None else r[0]
        if task == 'claim_supported':
            sup[ex['asked']['claim']] = p
        elif task == 'claim_contradicted':
            con[ex['asked']['claim']] = p
        elif task == 'answer_correct':
            correct = (ex['asked'].get('query') or '', ex['asked'].get('expected') or '', ex['asked']['response'], p)
    return sup, con, correct


def newcomer_outcome(name, metric, want, bands):
    """'pass', 'fail' or 'awaiting a person' for one assertion under the bands."""
    sup, con, correct = newcomer_readings(name)
    if metric == 'correctness':
        query, ref, resp, p = correct
        verdict = True if found_rule(query, ref, resp)[1] else decide(bands['correctness'], p)
        if verdict is None:
            return 'awaiting a person'
        ok = verdict if want == 'pass' else not verdict
        return 'pass' if ok else 'fail'
    ps = list(sup.values())
    d = [decide(bands['claims'], p) for p in ps]
    n = len(ps)
    lo_score = sum(x is True for x in d) / n
    hi_score = sum(x is not False for x in d) / n
    thr = METRIC_THRESHOLD[metric]
    if lo_score >= thr:
        meets_ = True
    elif hi_score < thr:
        meets_ = False
    else:
        return 'awaiting a person'
    ok = meets_ if want == 'pass' else not meets_
    return 'pass' if ok else 'fail'


def newcomer_table(band_sets):
    out = ['| test | answer | readings (1.5B, from its recordings) | ' + ' | '.join(n for n, _ in band_sets) + ' |',
           '| --- | --- | --- | ' + ' | '.join('---' for _ in band_sets) + ' |']
    for name, right, asserts in NEWCOMER_TESTS:
        sup, con, correct = newcomer_readings(name)
        if correct:
            query, ref, resp, p = correct
            rd = f'reference {found_rule(query, ref, resp)[2]}; P(yes) {p:.3f}'
        else:
            rd = '; '.join(f'«{c[:40]}» P(sup) {p:.3f}' for c, p in sup.items())
        cells_ = []
        for _, bands in band_sets:
            res = [newcomer_outcome(name, m, w, bands) for m, w in asserts]
            if 'fail' in res:
                o = 'fails' + (' (a right answer reported as a defect)' if right == 'right' else ' (the wrong answer not caught)')
            elif 'awaiting a person' in res:
                o = 'awaiting a person'
            else:
                o = 'passes' + (' (caught)' if right == 'wrong' else '')
            cells_.append(o)
        out.append(f'| {name} | {right} | {rd} | ' + ' | '.join(cells_) + ' |')
    return '\n'.join(out)


def band_json(b):
    return b if b == NEVER else [b[0], b[1]]


def cmd_report(args):
    text, defaults = report()
    print(text)
    if args.write:
        os.makedirs(os.path.join(ROOT, 'bench/bands'), exist_ok=True)
        with open(os.path.join(ROOT, 'bench/bands/tables.md'), 'w', encoding='utf-8') as f:
            f.write('# Bands: every table (generated by `scripts/band-designs.py report --write`; do not edit)\n' + text + '\n')
        js = {k: {kind: band_json(b) for kind, b in v.items()} for k, v in defaults.items()}
        with open(os.path.join(ROOT, 'bench/bands/defaults.json'), 'w', encoding='utf-8') as f:
            json.dump(js, f, indent=2)
            f.write('\n')


FIXTURE = os.path.join(ROOT, 'tests/fixtures/answer_found.json')


def fixture_check(verbose=False):
    """The rule on its fixture: (cases that differ from what is pinned,
    the lines of the summary)."""
    cases = json.load(open(FIXTURE, encoding='utf-8'))
    bad = 0
    by_set = {}
    for c in cases:
        r = FOUND.found_rule(c['query'], c['reference'], c['response'])
        got = (r.found, r.decided, r.doubt[0] if r.doubt else None)
        ok = got == (c['found'], c['decided'], c['doubt'])
        bad += not ok
        if verbose or not ok:
            print(f'{"ok  " if ok else "DIFF"} {got} | {c["reference"]} | {c["response"]} | {c["why"]}')
        group = 'gold answers people rejected' if c['kind'] == 'gold-rejected' else c['set']
        row = by_set.setdefault(group, [0, 0, 0, 0])
        if c['person'] == 'incorrect':
            row[0] += 1
            row[1] += r.decided
        elif c['person'] == 'correct':
            row[2] += 1
            row[3] += r.decided
    lines = ['| cases | wrong answers | wrong decided correct, no call | right answers | right decided, no call |',
             '| --- | --- | --- | --- | --- |']
    for group, (w, wd, rt, rd) in by_set.items():
        lines.append(f'| {group} | {w} | {wd} | {rt} | {rd} |')
    return bad, len(cases), lines


def cmd_found(args):
    """The rule on its fixture, then on every correctness item: how many
    answers each rule decides with no call, and how many of those people
    labelled wrong, before (v1) and now, with plain matching beside."""
    bad, n, lines = fixture_check(args.verbose)
    out = []
    w = out.append
    w(f'fixture: {n - bad} of {n} cases read as pinned\n')
    w('\n'.join(lines))
    w('\n| source | half | items | before: decided, no call | before: of them wrong | now: decided, no call | now: of them wrong | plain matching: acc / kappa (all items) |')
    w('| --- | --- | --- | --- | --- | --- | --- | --- |')
    for src in SETS['correctness']:
        for h in ('dev', 'test'):
            its = [it for it in load('correctness') if it['source'] == src and it['half'] == h]
            if not its:
                w(f'| {src} | {h} | 0 (not committed: regenerate it, see its README) | | | | | |')
                continue
            wrong = [it['label'] != 'correct' for it in its]
            old = [f and not neg for f, neg, _ in (found_rule_v1(it['reference'], it['response']) for it in its)]
            new = [found_rule(it.get('query'), it['reference'], it['response'])[1] for it in its]
            plain = [plain_match(it['reference'], it['response']) for it in its]
            pairs = [(not w, p) for w, p in zip(wrong, plain)]
            acc = sum(a == b for a, b in pairs) / len(pairs)
            w(f'| {src} | {h} | {len(its)} | {sum(old)} | {sum(o and x for o, x in zip(old, wrong))} | '
                  f'{sum(new)} | {sum(d and x for d, x in zip(new, wrong))} | {fmt(acc)} / {fmt(kappa(pairs))} |')
    w('\nDecided now with no call, and labelled not correct by people (dev halves only: the test halves are '
          'counted above, not read):')
    for it in load('correctness'):
        if it['half'] != 'dev':
            continue
        f, d, what = found_rule(it.get('query'), it['reference'], it['response'])
        if d and it['label'] != 'correct':
            w(f'- {it["id"]} ({it["source"]} {it["half"]}, {it["label"]}): {what}')
    w('\n# Correctness bands with this rule, leave one source out (as `report`; sources not committed are absent)')
    text, _ = report(kinds=('correctness',))
    w(text)
    text = '\n'.join(out)
    print(text)
    if args.write:
        with open(os.path.join(ROOT, 'bench/bands/found.md'), 'w', encoding='utf-8') as f:
            f.write('# The found rule: its cases, the public sets before and now, the correctness bands '
                    '(generated by `scripts/band-designs.py found --write`; do not edit)\n\n' + text + '\n')
    return bad


def cmd_selftest(args):
    failures = 0
    # 1. the YAML reader against PyYAML, where installed
    try:
        import yaml
    except ImportError:
        yaml = None
        print('selftest: PyYAML not installed; miniyaml not compared')
    if yaml is not None:
        files = sorted(glob.glob(os.path.join(ROOT, 'tests/**/*.snap'), recursive=True) +
                       glob.glob(os.path.join(ROOT, 'tests/**/*.yaml'), recursive=True))
        for f in files:
            text = open(f, encoding='utf-8').read()
            body = text.split('\n---\n', 1)[1] if text.startswith('---\n') else text
            try:
                same = miniyaml.load(body) == yaml.safe_load(body)
            except miniyaml.YamlError as e:
                # Said and counted, never a traceback that hides the rest.
                same = False
                print(f'selftest: miniyaml refuses {f}: {e}')
            if not same:
                failures += 1
                print(f'selftest: miniyaml differs from PyYAML on {f}')
        print(f'selftest: miniyaml read {len(files)} files as PyYAML does' if not failures else '')
    # 2. the reader against every recording's own reading
    n = 0
    for f in sorted(glob.glob(os.path.join(ROOT, 'tests/**/snapshots/**/*.snap'), recursive=True)):
        for kind, design, k, reply, tokens, read in snapshot_exchanges(f):
            if read is None:
                continue
            r = answer_word(reply, tokens)
            n += 1
            if r is None or abs(r[0] - read) > 0.0005 + 1e-9:
                failures += 1
                print(f'selftest: {f}: recorded P(yes) {read}, read here {r}')
    print(f'selftest: {n} recorded readings reproduced')
    # 3. the found rule's fixture
    bad, n, _ = fixture_check()
    failures += bad
    print(f'selftest: found rule agrees with {n - bad} of {n} fixture cases')
    # 4. kappa
    assert kappa([(True, True), (False, False)]) == 1.0 and kappa([(True, True)]) is None
    assert abs(kappa([(True, True), (True, False), (False, False), (False, True)])) < 1e-12
    sys.exit(1 if failures else 0)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest='cmd', required=True)
    i = sub.add_parser('import', help='answers in committed recordings, into a cache file')
    i.add_argument('--model', required=True)
    i.add_argument('--out', required=True)
    i.add_argument('snapshots', nargs='+')
    r = sub.add_parser('report', help='every table, from the caches (no server)')
    r.add_argument('--write', action='store_true', help='also write bench/bands/tables.md and bench/bands/defaults.json')
    f = sub.add_parser('found', help='the found rule on its fixture and on the correctness sets, before and now')
    f.add_argument('--verbose', action='store_true')
    f.add_argument('--write', action='store_true', help='also write bench/bands/found.md')
    sub.add_parser('selftest', help='miniyaml against PyYAML, the reader against the recordings, the fixture')
    args = p.parse_args()
    {'import': cmd_import, 'report': cmd_report, 'found': cmd_found, 'selftest': cmd_selftest}[args.cmd](args)


if __name__ == '__main__':
    main()
