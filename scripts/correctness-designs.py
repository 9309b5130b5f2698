#!/usr/bin/env python3
"""Ways of deciding answer correctness and criteria, measured against people,
source by source: the probe behind issue 36 (bench/designs/correctness-criteria.md).

Like scripts/verify-designs.py for claims: it asks a llama.cpp `llama-server`
(OpenAI-compatible, on 127.0.0.1) the labelled items in several ways, keeps
every raw answer (the first tokens with their likeliest alternatives, the
seconds it took) in a cache file keyed by the exact request, and reads the
answers offline with several decision rules, fitted leave-one-source-out.
The cache holds ids and the model's tokens only, never source text.

    scripts/correctness-designs.py ask --port 8767 --model qwen15 \\
        --cache bench/designs/correctness-qwen15.jsonl --designs direct  SET_DIR...
    scripts/correctness-designs.py report --cache bench/designs/correctness-qwen15.jsonl SET_DIR...
    scripts/correctness-designs.py loso --read dev --cache bench/designs/correctness-qwen15.jsonl --model qwen15 SET_DIR...
    scripts/correctness-designs.py pair --port 8767     # the newcomer's pair and the negation case

SET_DIR: folders of labelled items, `tests/public_correctness/<source>/<half>`,
`tests/labelled_correctness/<half>` (source `ours`), `tests/public_criteria/<source>/<half>`,
`tests/labelled_criteria/<half>` (source `ours`). Graded answers (with `reference`)
and judged responses (with `criteria`) may be given together; each is read
with its own designs.

Designs (what is asked):
  correctness  direct    bench/designs/prompts/answer_correct.txt, system_word.txt, P(yes)
               direct_b  the same layout, another wording (answer_correct_b.txt)
               wrong     the other way round: "a different answer, or contradict it?" (answer_wrong.txt)
               swapped   direct with the response before the expected answer (answer_correct_swapped.txt)
               persent   per reference sentence: claim_supported.txt with the response
                         as the document and the sentence as the claim (long references)
  criteria     met       prompts/criteria_met.txt, system_reason.txt, P(yes) of the first word
               geval     prompts/criteria_steps.txt once per criteria text (JSON steps),
                         then prompts/criteria_score.txt, expected score over 1-5 -> [0, 1]
No call: plain matching (an accepted answer found in the response after
normalisation, `normalise` below).

Templates are rendered as ragaliq renders them: the text after `---` trimmed,
`{{name}}` replaced in one pass, user data trimmed and `<`/`>` escaped.
Asked at temperature 0 with 10 likeliest alternatives per token (ragaliq's
TOP_LOGPROBS), 3 reply tokens for one-word questions and criteria answers
(the reason ragaliq lets follow is not read), 320 for the steps.
Standard library only.
"""
import argparse, functools, hashlib, json, math, os, re, sys, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = 10


def template_file(path):
    text = open(path, encoding='utf-8').read()
    return text.split('---\n', 1)[1].strip()


def template(name):
    return template_file(os.path.join(ROOT, 'prompts', name + '.txt'))


def candidate(name):
    return template_file(os.path.join(ROOT, 'bench', 'designs', 'prompts', name + '.txt'))


def escape(s):
    return s.replace('<', '&lt;').replace('>', '&gt;')


def render(t, **kw):
    """One pass, as ragaliq: inserted values are never scanned again."""
    out, rest = [], t
    while True:
        i = rest.find('{{')
        if i < 0:
            break
        j = rest.find('}}', i)
        if j < 0:
            break
        name = rest[i + 2:j]
        out.append(rest[:i])
        out.append(kw[name] if name in kw else rest[i:j + 2])
        rest = rest[j + 2:]
    out.append(rest)
    return ''.join(out)


def document(passages):
    if len(passages) == 1:
        return escape(passages[0].strip())
    return '\n'.join(f'[{i + 1}] {escape(p.strip())}' for i, p in enumerate(passages))


def criteria_vars(it):
    ctx = it.get('passages') or []
    context = f'<document>\n{document(ctx)}\n</document>\n' if ctx else ''
    exp = (it.get('expected') or '').strip()
    expected = f'<expected>{escape(exp)}</expected>\n' if exp else ''
    return context, expected


def msgs(system, user):
    return [{'role': 'system', 'content': system}, {'role': 'user', 'content': user}]


# ------------------------------------------------------------- the questions

def q_direct(it, name='answer_correct'):
    return msgs(template('system_word'), render(candidate(name), query=escape(it['query'].strip()),
                                                 expected=escape(it['reference'].strip()),
                                                 response=escape(it['response'].strip())))


def q_claim(passage, claim):
    return msgs(template('system_word'), render(template('claim_supported'), passages=escape(passage.strip()),
                                                 claim=escape(claim.strip())))


def q_met(it):
    context, expected = criteria_vars(it)
    return msgs(template('system_reason'), render(template('criteria_met'), query=escape(it['query'].strip()),
                                                   context=context, expected=expected,
                                                   response=escape(it['response'].strip()),
                                                   criteria=escape(it['criteria'].strip())))


def q_steps(criteria):
    return msgs(template('system'), render(template('criteria_steps'), criteria=escape(criteria.strip())))


def q_score(it, steps):
    context, expected = criteria_vars(it)
    listed = '\n'.join(f'{i + 1}. {escape(s.strip())}' for i, s in enumerate(steps))
    return msgs(template('system_reason'), render(template('criteria_score'), criteria=escape(it['criteria'].strip()),
                                                   steps=listed, query=escape(it['query'].strip()),
                                                   context=context, expected=expected,
                                                   response=escape(it['response'].strip())))


STEPS_SCHEMA = {'type': 'object', 'properties': {'steps': {'type': 'array', 'items': {'type': 'string', 'maxLength': 300},
                                                           'minItems': 1, 'maxItems': 8}},
                'required': ['steps'], 'additionalProperties': False}


@functools.lru_cache(maxsize=None)
def sentences(text):
    """A long reference cut into sentences: LiveQA's "Reference answer N:"
    markers and bracketed citation numbers ("[5]") dropped, split after
    . ! ? before a capital, digit or quote,
    fragments under 20 characters joined to the sentence before."""
    text = re.sub(r'Reference answer \d+:\s*', ' ', text)
    text = re.sub(r'\[\d+\]', '', text).strip()
    parts = [p.strip() for p in re.split(r'(?<=[.!?])\s+(?=[A-Z0-9"“(])', text) if p.strip()]
    out = []
    for p in parts:
        if out and len(p) < 20:
            out[-1] += ' ' + p
        else:
            out.append(p)
    return out


# ---------------------------------------------------------- plain matching

NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen '
    'sixteen seventeen eighteen nineteen twenty'.split())}
NUMBER_WORDS.update({'thirty': '30', 'forty': '40', 'fifty': '50', 'sixty': '60', 'seventy': '70',
                     'eighty': '80', 'ninety': '90', 'hundred': '100'})


def normalise(s):
    """Lower-case; thousands separators dropped (1,776 -> 1776); every
    character that is not a letter, digit or space becomes a space
    (punctuation, quotes, dashes, %, £); the words a, an, the dropped;
    number words zero..twenty, thirty..ninety, hundred written as digits;
    whitespace collapsed."""
    s = s.lower()
    s = re.sub(r'(?<=\d),(?=\d{3}\b)', '', s)
    s = ''.join(c if c.isalnum() or c.isspace() else ' ' for c in s)
    words = [NUMBER_WORDS.get(w, w) for w in s.split() if w not in ('a', 'an', 'the')]
    return ' '.join(words)


def accepted(reference):
    """`Accepted answers: "A"; "B"` gives A and B; any other reference is one answer."""
    r = reference.strip()
    if r.startswith('Accepted answers:'):
        return [a.replace('\\"', '"') for a in re.findall(r'"((?:[^"\\]|\\.)*)"', r)]
    return [r]


@functools.lru_cache(maxsize=None)
def found(reference, response):
    """Whether an accepted answer appears in the response, whole words, after normalisation."""
    resp = ' ' + normalise(response) + ' '
    return any(n and (' ' + n + ' ') in resp for n in (normalise(a) for a in accepted(reference)))


STOP = set('of in on at to for from by with and or is are was were be been it its this that as per after before up'.split())


@functools.lru_cache(maxsize=None)
def found_words(reference, response):
    """Looser evidence: for some accepted answer, every number in it is in
    the response and at least half of its other words (normalised, without
    STOP words) are too. "30 days from delivery" against "up to 30 days
    after they are delivered": 30 and days of days, delivery -> found."""
    resp = set(normalise(response).split())
    for a in accepted(reference):
        words = [w for w in normalise(a).split() if w not in STOP]
        if not words:
            continue
        nums = [w for w in words if any(c.isdigit() for c in w)]
        if all(n in resp for n in nums) and sum(w in resp for w in words) >= len(words) / 2:
            return True
    return False


# --------------------------------------------------------------- loading

def load_yaml_items(path):
    """The flat YAML our labelled sets use: `- key: value` items, values plain
    or double-quoted (JSON escapes), `passages:` a list of quoted strings."""
    items, cur, listkey = [], None, None
    for raw in open(path, encoding='utf-8'):
        line = raw.rstrip('\n')
        if not line.strip() or line.lstrip().startswith('#'):
            continue
        m = re.match(r'^(-\s+|\s+)([a-z_]+):\s*(.*)$', line)
        if m:
            if m.group(1).startswith('-'):
                cur = {}
                items.append(cur)
            key, val = m.group(2), m.group(3)
            if val == '':
                cur[key], listkey = [], key
            else:
                cur[key], listkey = (json.loads(val) if val.startswith('"') else val), None
            continue
        m = re.match(r'^\s+-\s+(.*)$', line)
        if m and listkey:
            v = m.group(1)
            cur[listkey].append(json.loads(v) if v.startswith('"') else v)
            continue
        raise ValueError(f'{path}: cannot read line {line!r}')
    return items


def load(dirs):
    items = []
    for d in dirs:
        parts = os.path.normpath(d).split(os.sep)
        half = next(p for p in reversed(parts) if p in ('dev', 'test'))
        pub = [p for p in ('public_correctness', 'public_criteria') if p in parts]
        source = parts[parts.index(pub[0]) + 1] if pub else 'ours'
        for f in sorted(os.listdir(d)):
            path = os.path.join(d, f)
            if f.endswith('.jsonl'):
                got = [json.loads(l) for l in open(path, encoding='utf-8') if l.strip()]
            elif f.endswith('.yaml'):
                got = load_yaml_items(path)
            else:
                continue
            for it in got:
                it['source'], it['half'] = source, half
                it['kind'] = 'criteria' if 'criteria' in it else 'correctness'
                items.append(it)
    return items


def positive(it):
    return it['label'] in ('correct', 'meets')


# ------------------------------------------------------------------ asking

def key(model, messages, max_tokens, fmt=None):
    blob = json.dumps([model, messages, max_tokens, fmt], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def ask(port, messages, max_tokens, fmt=None):
    body = {'messages': messages, 'temperature': 0, 'max_tokens': max_tokens,
            'logprobs': True, 'top_logprobs': TOP, 'stream': False}
    if fmt:
        body['response_format'] = fmt
    req = urllib.request.Request(f'http://127.0.0.1:{port}/v1/chat/completions',
                                 data=json.dumps(body).encode(), headers={'Content-Type': 'application/json'})
    for attempt in range(5):
        try:
            with urllib.request.urlopen(req, timeout=900) as r:
                reply = json.load(r)
            break
        except Exception:
            if attempt == 4:
                raise
            time.sleep(2 + 3 * attempt)
    choice = reply['choices'][0]
    tokens = [{'t': c['token'], 'lp': c['logprob'], 'top': [[a['token'], a['logprob']] for a in c.get('top_logprobs', [])]}
              for c in (choice.get('logprobs') or {}).get('content') or []]
    return {'text': choice['message']['content'], 'tokens': tokens[:4],
            'prompt_tokens': reply.get('usage', {}).get('prompt_tokens'),
            'completion_tokens': reply.get('usage', {}).get('completion_tokens'),
            'chars': sum(len(m['content']) for m in messages)}


class Asker:
    def __init__(self, args):
        self.args, self.cache, self.done, self.started = args, {}, 0, time.time()
        if os.path.exists(args.cache):
            for line in open(args.cache, encoding='utf-8'):
                e = json.loads(line)
                self.cache[e['key']] = e
        self.out = open(args.cache, 'a', encoding='utf-8')

    def __call__(self, design, ids, messages, max_tokens, sub=None, fmt=None, keep_text=False):
        k = key(self.args.model, messages, max_tokens, fmt)
        if k in self.cache:
            return self.cache[k]
        t0 = time.time()
        answer = ask(self.args.port, messages, max_tokens, fmt)
        e = {'key': k, 'model': self.args.model, 'design': design, 'ids': ids, 'secs': round(time.time() - t0, 3), **answer,
             'load': round(os.getloadavg()[0], 2)}
        if sub is not None:
            e['sub'] = sub
        if not keep_text:
            e['text'] = e['text'][:40]  # the answer word, not a quote of the data
        self.cache[k] = e
        self.out.write(json.dumps(e, ensure_ascii=False) + '\n')
        self.out.flush()
        self.done += 1
        if self.done % 25 == 0:
            print(f'{self.done} asked, {time.time() - self.started:.0f} s', file=sys.stderr, flush=True)
        return e


def subset(items, limit):
    """At most `limit` items per source and half, the labels in equal shares
    (as far as each has items), each label's in SHA-256 order of the id."""
    if not limit:
        return items
    out = []
    groups = {}
    for it in items:
        groups.setdefault((it['source'], it['half'], it['kind']), {}).setdefault(it['label'], []).append(it)
    for g in groups.values():
        share = -(-limit // len(g))
        for label in sorted(g):
            out += sorted(g[label], key=lambda it: hashlib.sha256(it['id'].encode()).hexdigest())[:share]
    return out


def cmd_ask(args):
    items = subset(load(args.dirs), args.limit)
    designs = args.designs.split(',')
    a = Asker(args)
    for it in items:
        if it['kind'] == 'correctness':
            if 'direct' in designs:
                a('direct', [it['id']], q_direct(it), 3)
            if 'direct_b' in designs:
                a('direct_b', [it['id']], q_direct(it, 'answer_correct_b'), 3)
            if 'wrong' in designs:
                a('wrong', [it['id']], q_direct(it, 'answer_wrong'), 3)
            if 'swapped' in designs:
                a('swapped', [it['id']], q_direct(it, 'answer_correct_swapped'), 3)
            if 'persent' in designs:
                ss = sentences(it['reference'])
                if len(ss) >= 2:
                    for i, s in enumerate(ss[:args.max_sentences]):
                        a('persent', [it['id']], q_claim(it['response'], s), 3, sub=i)
        else:
            if 'met' in designs:
                a('met', [it['id']], q_met(it), 3)
            if 'geval' in designs:
                fmt = {'type': 'json_schema', 'json_schema': {'name': 'criteria_steps', 'schema': STEPS_SCHEMA}}
                e = a('steps', [], q_steps(it['criteria']), 320, fmt=fmt, keep_text=True)
                try:
                    steps = json.loads(e['text'])['steps']
                except Exception:
                    print(f'{it["id"]}: steps unreadable: {e["text"][:80]!r}', file=sys.stderr)
                    continue
                a('geval', [it['id']], q_score(it, steps), 3)
    print(f'done: {a.done} asked in {time.time() - a.started:.0f} s', file=sys.stderr)


# ----------------------------------------------------------------- reading

def word(tok):
    return re.sub(r'[^a-z0-9]', '', tok.lower())


def read_words(entry, words):
    """Probabilities of `words` as ragaliq's parse::answer_word reads them:
    at the first token that is one of the words, else at the first token
    with a letter or digit if the words hold at least half its mass there,
    renormalised over the words; None when neither."""
    toks = entry['tokens']
    at = next((i for i, t in enumerate(toks) if word(t['t']) in words), None)
    written = at is not None
    if at is None:
        at = next((i for i, t in enumerate(toks) if word(t['t'])), None)
    if at is None:
        return None
    t = toks[at]
    mass = {w: 0.0 for w in words}
    seen = False
    for tok, lp in t['top']:
        seen |= tok == t['t']
        if word(tok) in mass:
            mass[word(tok)] += math.exp(lp)
    if not seen and word(t['t']) in mass:
        mass[word(t['t'])] += math.exp(t['lp'])
    total = sum(mass.values())
    if (written or total >= 0.5) and total > 0:
        return {w: m / total for w, m in mass.items()}
    return None


def cache_lines(paths):
    for path in paths:
        yield from open(path, encoding='utf-8')


def collect(cache_paths, model=None):
    by = {}
    for line in cache_lines(cache_paths):
        e = json.loads(line)
        if model and e['model'] != model:
            continue
        d = e['design']
        if d == 'steps':
            continue
        if d == 'geval':
            r = read_words(e, ['1', '2', '3', '4', '5'])
            p = None if r is None else (sum(r[str(i)] * i for i in range(1, 6)) - 1) / 4
        else:
            r = read_words(e, ['yes', 'no'])
            p = None if r is None else r['yes']
        (i,) = e['ids']
        a = by.setdefault(i, {'secs': {}, 'chars': {}, 'calls': {}})
        if d == 'persent':
            a.setdefault('persent', {})[e['sub']] = p
        else:
            a[d] = p
        if e['secs'] is None:  # imported from a recording: no timing
            a.setdefault('recorded', set()).add(d)
        a['secs'][d] = a['secs'].get(d, 0) + (e['secs'] or 0)
        a['chars'][d] = a['chars'].get(d, 0) + e['chars']
        a['calls'][d] = a['calls'].get(d, 0) + 1
    return by


# ------------------------------------------------------------------ figures

def kappa(pairs):
    n = len(pairs)
    if n == 0:
        return float('nan')
    po = sum(p == j for p, j in pairs) / n
    pp = sum(p for p, _ in pairs) / n
    pj = sum(j for _, j in pairs) / n
    pe = pp * pj + (1 - pp) * (1 - pj)
    return 0.0 if pe == 1 else (po - pe) / (1 - pe)


def figures(pairs):
    n = len(pairs)
    tp = sum(p and j for p, j in pairs)
    called = sum(j for _, j in pairs)
    people = sum(p for p, _ in pairs)
    return {'n': n, 'kappa': kappa(pairs), 'acc': sum(p == j for p, j in pairs) / n if n else float('nan'),
            'prec': tp / called if called else float('nan'), 'rec': tp / people if people else float('nan'),
            'yes': called / n if n else float('nan'), 'ppl': people / n if n else float('nan')}


def auc(scored):
    pos = [s for s, y in scored if y]
    neg = [s for s, y in scored if not y]
    if not pos or not neg:
        return float('nan')
    return sum((p > q) + 0.5 * (p == q) for p in pos for q in neg) / (len(pos) * len(neg))


GRID = [round(0.05 * i, 2) for i in range(1, 20)] + [0.01, 0.02, 0.03, 0.97, 0.98, 0.99]
GRID.sort()


# A rule: the names of its thresholds, and a decision per item given them
# (None when the item has no reading for it).
def rules(kind):
    def p(d):
        return lambda a, it: a.get(d)

    def thr(d):
        return (('t',), lambda a, it, t: None if a.get(d) is None else a[d] >= t)

    if kind == 'criteria':
        return {'met P>=t': thr('met'), 'geval score>=t': thr('geval')}

    def combo(d):
        def decide(a, it, lo, hi):
            if a.get(d) is None:
                return None
            return a[d] >= (lo if found(it['reference'], it['response']) else hi)
        return (('t_found', 't_not'), decide)

    def combo_words(d):
        def decide(a, it, lo, hi):
            if a.get(d) is None:
                return None
            return a[d] >= (lo if found_words(it['reference'], it['response']) else hi)
        return (('t_found', 't_not'), decide)

    def sent(agg):
        def decide(a, it, t):
            if len(sentences(it['reference'])) < 2:  # one sentence: the direct question decides
                return None if a.get('direct') is None else a['direct'] >= t
            ps = [v for v in (a.get('persent') or {}).values() if v is not None]
            return agg(ps) >= t if ps else None  # not asked
        return (('t',), decide)

    def direct_and_sent(a, it, t, t2):
        if a.get('direct') is None:
            return None
        if len(sentences(it['reference'])) < 2:
            return a['direct'] >= t
        ps = [v for v in (a.get('persent') or {}).values() if v is not None]
        return a['direct'] >= t and sum(ps) / len(ps) >= t2 if ps else None

    return {
        'match (no call)': ((), lambda a, it: found(it['reference'], it['response'])),
        'always correct': ((), lambda a, it: True),
        'direct P>=t': thr('direct'),
        'direct_b P>=t': thr('direct_b'),
        'direct P>=0.5 (fixed)': ((), lambda a, it: None if a.get('direct') is None else a['direct'] >= 0.5),
        'found, else direct P>=t': (('t',), lambda a, it, t: None if a.get('direct') is None else
                                    (found(it['reference'], it['response']) or a['direct'] >= t)),
        'found & P>=t_found, else P>=t_not': combo('direct'),
        'found & P>=t_found, else P>=t_not (b)': combo('direct_b'),
        'words found & P>=t_found, else P>=t_not': combo_words('direct'),
        'words found (no call)': ((), lambda a, it: found_words(it['reference'], it['response'])),
        'mean P(direct, direct_b)>=t': (('t',), lambda a, it, t: None if a.get('direct') is None or a.get('direct_b') is None
                                        else (a['direct'] + a['direct_b']) / 2 >= t),
        # Second questions (issue 36, second round): the judge says yes to
        # wrong answers too often, so ask it the other way round too, or
        # with the response and the expected answer swapped (order bias).
        'direct>=t & wrong<t2': (('t', 't2'), lambda a, it, t, t2: None if a.get('direct') is None or a.get('wrong') is None
                                 else a['direct'] >= t and a['wrong'] < t2),
        'mean(direct, 1-wrong)>=t': (('t',), lambda a, it, t: None if a.get('direct') is None or a.get('wrong') is None
                                     else (a['direct'] + 1 - a['wrong']) / 2 >= t),
        'mean(direct, 1-wrong)>=0.5 (fixed)': ((), lambda a, it: None if a.get('direct') is None or a.get('wrong') is None
                                               else (a['direct'] + 1 - a['wrong']) / 2 >= 0.5),
        'direct>=0.5 & wrong<0.5 (fixed)': ((), lambda a, it: None if a.get('direct') is None or a.get('wrong') is None
                                            else a['direct'] >= 0.5 and a['wrong'] < 0.5),
        'mean(direct, swapped)>=t': (('t',), lambda a, it, t: None if a.get('direct') is None or a.get('swapped') is None
                                     else (a['direct'] + a['swapped']) / 2 >= t),
        'mean(direct, swapped)>=0.5 (fixed)': ((), lambda a, it: None if a.get('direct') is None or a.get('swapped') is None
                                               else (a['direct'] + a['swapped']) / 2 >= 0.5),
        'per ref sentence: mean P>=t': sent(lambda ps: sum(ps) / len(ps)),
        'per ref sentence: min P>=t': sent(min),
        'direct>=t & sentence mean>=t2': (('t', 't2'), direct_and_sent),
    }


def decided(rule, its, by, params):
    _, decide = rule
    out = []
    for it in its:
        a = by.get(it['id'])
        if a is None:
            continue
        d = decide(a, it, *params)
        if d is not None:
            out.append((positive(it), bool(d)))
    return out


def fit(rule, groups, by):
    """Thresholds maximising the mean kappa over the groups (each source weighted equally)."""
    names, _ = rule
    if not names:
        return ()
    best, best_k = None, -9
    grids = [GRID] * len(names)
    combos = [()]
    for g in grids:
        combos = [c + (x,) for c in combos for x in g]
    for c in combos:
        if len(c) == 2 and names == ('t_found', 't_not') and c[0] > c[1]:
            pass  # found may lower the bar, or not; both orders allowed
        ks = [kappa(decided(rule, g, by, c)) for g in groups if g]
        ks = [k for k in ks if not math.isnan(k)]
        if not ks:
            continue
        k = sum(ks) / len(ks)
        # ties: the threshold nearest the middle
        if k > best_k + 1e-12 or (abs(k - best_k) <= 1e-12 and sum(abs(x - 0.5) for x in c) < sum(abs(x - 0.5) for x in best)):
            best, best_k = c, k
    return best


def fmt_params(names, params):
    return ', '.join(f'{n}={v:g}' for n, v in zip(names, params)) if names else '-'


def cmd_report(args):
    items = subset(load(args.dirs), args.limit)
    by = collect(args.cache, args.model)
    kind = args.kind
    items = [it for it in items if it['kind'] == kind]
    sources = sorted(set(it['source'] for it in items))
    table = rules(kind)
    chosen = [r for r in (args.rules.split('|') if args.rules else table)]
    cell = lambda src, half: [it for it in items if it['source'] == src and it['half'] == half]
    out = []
    w = out.append
    # AUC of each score per source and half
    scores = ['met', 'geval'] if kind == 'criteria' else ['direct', 'direct_b']
    w(f'\n### AUC of the judge\'s P ({args.model or "all models"})\n')
    w('| source | half | n | ' + ' | '.join(f'AUC {s}' for s in scores) + ' |')
    w('| --- | --- | --- | ' + ' | '.join('---' for _ in scores) + ' |')
    for src in sources:
        for half in ('dev', 'test'):
            its = cell(src, half)
            if not its:
                continue
            row = []
            for s in scores:
                sc = [(by[it['id']][s], positive(it)) for it in its if it['id'] in by and by[it['id']].get(s) is not None]
                row.append(f'{auc(sc):.3f} ({len(sc)})' if sc else '-')
            w(f'| {src} | {half} | {len(its)} | ' + ' | '.join(row) + ' |')
    # Leave one source out
    w(f'\n### Leave one source out: thresholds fitted on the other sources\' dev halves, read on the held-out source\n')
    w('| rule | held out | fitted | dev kappa | test kappa | test acc | test P/R correct | test n | plain matching test kappa |')
    w('| --- | --- | --- | --- | --- | --- | --- | --- | --- |')
    summary = []
    for name in chosen:
        rule = table[name]
        worst_dev, worst_test = [], []
        for src in sources:
            others = [cell(o, 'dev') for o in sources if o != src]
            params = fit(rule, others, by)
            if params is None:
                continue
            fd = figures(decided(rule, cell(src, 'dev'), by, params))
            ft = figures(decided(rule, cell(src, 'test'), by, params))
            if ft['n'] == 0:
                continue
            if kind == 'correctness':
                base = figures(decided(table['match (no call)'], [it for it in cell(src, 'test') if it['id'] in by], by, ()))
                base_s = f'{base["kappa"]:.3f}'
            else:
                base_s = '-'
            w(f'| {name} | {src} | {fmt_params(rule[0], params)} | {fd["kappa"]:.3f} | {ft["kappa"]:.3f} | {ft["acc"]:.2f} '
              f'| {ft["prec"]:.2f}/{ft["rec"]:.2f} | {ft["n"]} | {base_s} |')
            worst_dev.append((fd['kappa'], src))
            worst_test.append((ft['kappa'], src))
        if worst_test:
            summary.append((name, min(worst_dev), min(worst_test), sum(k for k, _ in worst_test) / len(worst_test)))
    w('\n### Worst held-out source per rule (the choice: best worst test kappa)\n')
    w('| rule | worst dev kappa | worst test kappa | mean test kappa |')
    w('| --- | --- | --- | --- |')
    for name, wd, wt, mt in sorted(summary, key=lambda x: -x[2][0] if not math.isnan(x[2][0]) else 9):
        w(f'| {name} | {wd[0]:.3f} ({wd[1]}) | {wt[0]:.3f} ({wt[1]}) | {mt:.3f} |')
    # Defaults: fitted on every dev half
    w('\n### At the default: thresholds fitted on every source\'s dev half (each weighted equally)\n')
    w('| rule | default | source | half | n | kappa | acc | P/R correct | judge yes% | people yes% |')
    w('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
    for name in chosen:
        rule = table[name]
        params = fit(rule, [cell(s, 'dev') for s in sources], by)
        if params is None:
            continue
        for src in sources:
            for half in ('dev', 'test'):
                f = figures(decided(rule, cell(src, half), by, params))
                if f['n']:
                    w(f'| {name} | {fmt_params(rule[0], params)} | {src} | {half} | {f["n"]} | {f["kappa"]:.3f} | {f["acc"]:.2f} '
                      f'| {f["prec"]:.2f}/{f["rec"]:.2f} | {100 * f["yes"]:.0f} | {100 * f["ppl"]:.0f} |')
    if args.fixed:
        w('\n### At given thresholds\n')
        w('| rule | thresholds | source | half | n | kappa | acc | P/R correct |')
        w('| --- | --- | --- | --- | --- | --- | --- | --- |')
        for spec in args.fixed:
            name, vals = spec.rsplit('@', 1)
            params = tuple(float(x) for x in vals.split(',')) if vals else ()
            rule = table[name]
            for src in sources:
                for half in ('dev', 'test'):
                    f = figures(decided(rule, cell(src, half), by, params))
                    if f['n']:
                        w(f'| {name} | {vals} | {src} | {half} | {f["n"]} | {f["kappa"]:.3f} | {f["acc"]:.2f} | {f["prec"]:.2f}/{f["rec"]:.2f} |')
    # Cost
    w('\n### Cost per answer (calls, prompt characters, seconds), per design\n')
    w('| design | source | answers | calls/answer | chars/answer | s/answer |')
    w('| --- | --- | --- | --- | --- | --- |')
    designs = sorted(set(d for a in by.values() for d in a['calls']))
    for d in designs:
        for src in sources:
            its = [by[it['id']] for it in items if it['source'] == src and it['id'] in by and d in by[it['id']]['calls']
                   and d not in by[it['id']].get('recorded', ())]
            if its:
                n = len(its)
                w(f'| {d} | {src} | {n} | {sum(a["calls"][d] for a in its) / n:.2f} | {sum(a["chars"][d] for a in its) / n:.0f} '
                  f'| {sum(a["secs"][d] for a in its) / n:.2f} |')
    print('\n'.join(out))


# ------------------------------------------- answers already recorded

def cmd_import(args):
    """Reads the criteria_met answers in ragaliq's committed recordings (insta
    snapshots of `calibrate`, asked with the same prompts: criteria_met.txt and
    system_reason.txt; only the first token is read, so the longer reply limit
    does not matter) into the cache as design `met`, matched to items by
    criteria, question and response. Needs PyYAML for the snapshots (the
    only part of this script that is not standard library)."""
    import yaml
    items = load(args.dirs)
    index = {(it.get('criteria', '').strip(), it['query'].strip(), it['response'].strip()): it for it in items if it['kind'] == 'criteria'}
    seen = set()
    if os.path.exists(args.cache):
        seen = {json.loads(l)['key'] for l in open(args.cache, encoding='utf-8')}
    out = open(args.cache, 'a', encoding='utf-8')
    n = 0
    for snap in args.snapshots:
        text = open(snap, encoding='utf-8').read().split('\n---\n', 1)[1]
        rec = yaml.safe_load(text)
        for ex in rec.get('exchanges', []):
            if ex.get('task') != 'criteria_met':
                continue
            asked = ex['asked']
            it = index.get((asked['criteria'].strip(), asked['query'].strip(), asked['response'].strip()))
            if it is None:
                print(f'{snap}: no item for {asked["query"][:50]!r}', file=sys.stderr)
                continue
            k = key(args.model, ['recorded', it['id']], 0)
            if k in seen:
                continue
            seen.add(k)
            tokens = [{'t': t['token'], 'lp': t['logprob'], 'top': [[a, lp] for a, lp in (t.get('top') or {}).items()]}
                      for t in (ex.get('probabilities') or [])[:4]]
            e = {'key': k, 'model': args.model, 'design': 'met', 'ids': [it['id']], 'secs': None,
                 'text': (ex.get('reply') or '')[:40], 'tokens': tokens, 'chars': len(json.dumps(asked, ensure_ascii=False)),
                 'from': os.path.relpath(snap, ROOT)}
            out.write(json.dumps(e, ensure_ascii=False) + '\n')
            n += 1
    print(f'imported {n} recorded answers', file=sys.stderr)


# ------------------------------------------------------ the newcomer's pair

PAIR = [
    ('newcomer (should pass)', 'How long is the return window for online orders?', '30 days from delivery.',
     'You can return online orders for up to 30 days after they are delivered.'),
    ('wrong twin (should fail)', 'How long is the return window for online orders?', '30 days from delivery.',
     'You have 14 days from purchase to return online orders.'),
    ('negation (should fail)', 'How long is the return window for online orders?', '30 days from delivery.',
     'It is not 30 days; it is 14.'),
]


def cmd_pair(args):
    args.cache = args.cache or os.devnull
    a = Asker(args)
    print(f'| case | reference found | reference words found | P(yes) {args.model} | s |')
    print('| --- | --- | --- | --- | --- |')
    for name, q, ref, resp in PAIR:
        it = {'query': q, 'reference': ref, 'response': resp}
        e = a('pair', [name], q_direct(it), 3)
        r = read_words(e, ['yes', 'no'])
        print(f'| {name}: "{resp}" | {found(ref, resp)} | {found_words(ref, resp)} | {r["yes"]:.3f} | {e["secs"]:.2f} |'
              if r else f'| {name} | unread {e["text"]!r} |')
    if args.show:
        print('\nThe direct question as rendered (system, then user):\n')
        m = q_direct({'query': PAIR[0][1], 'reference': PAIR[0][2], 'response': PAIR[0][3]})
        print(m[0]['content'] + '\n---\n' + m[1]['content'])


def cmd_loso(args):
    """Leave one source out, read on one half: thresholds fitted on the other
    sources' dev halves, read on the held-out source's `--read` half. With
    `--read dev` the held-out half was never fitted on, so designs can be
    chosen on it before any test half is read (the second round's rule)."""
    items = [it for it in load(args.dirs) if it['kind'] == 'correctness']
    by = collect(args.cache, args.model)
    table = rules('correctness')
    names = args.rules.split('|') if args.rules else list(table)
    sources = sorted(set(it['source'] for it in items))
    cell = lambda s, h: [it for it in items if it['source'] == s and it['half'] == h]
    print('| rule | ' + ' | '.join(f'{s} held out: fitted, kappa, P/R (n)' for s in sources) + ' | worst | mean |')
    print('| --- |' + ' --- |' * (len(sources) + 2))
    for n in names:
        rule, row, ks = table[n], [], []
        for s in sources:
            params = fit(rule, [cell(o, 'dev') for o in sources if o != s], by)
            f = figures(decided(rule, cell(s, args.read), by, params))
            row.append(f'{fmt_params(rule[0], params)}, {f["kappa"]:.3f}, {f["prec"]:.2f}/{f["rec"]:.2f} ({f["n"]})')
            ks.append(f['kappa'])
        print(f'| {n} | ' + ' | '.join(row) + f' | {min(ks):.3f} | {sum(ks) / len(ks):.3f} |')
    print(f'\n| source | {args.read} half: AUC direct | swapped | 1 - wrong |')
    print('| --- | --- | --- | --- |')
    for s in sources:
        row = []
        for sc in ('direct', 'swapped', 'wrong'):
            pts = [((1 - by[it['id']][sc]) if sc == 'wrong' else by[it['id']][sc], positive(it))
                   for it in cell(s, args.read) if it['id'] in by and by[it['id']].get(sc) is not None]
            row.append(f'{auc(pts):.3f} ({len(pts)})' if pts else '-')
        print(f'| {s} | ' + ' | '.join(row) + ' |')


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest='cmd', required=True)
    a = sub.add_parser('ask')
    a.add_argument('--port', type=int, required=True)
    a.add_argument('--model', required=True, help='a name for the cache (e.g. qwen15)')
    a.add_argument('--cache', required=True)
    a.add_argument('--designs', default='direct')
    a.add_argument('--max-sentences', type=int, default=8)
    a.add_argument('--limit', type=int, help='at most this many items per source and half, labels in equal shares')
    a.add_argument('dirs', nargs='+')
    r = sub.add_parser('report')
    r.add_argument('--cache', required=True, action='append', help='a cache file (repeat for several)')
    r.add_argument('--model')
    r.add_argument('--kind', choices=['correctness', 'criteria'], default='correctness')
    r.add_argument('--rules', help='rule names separated by |')
    r.add_argument('--fixed', action='append', help='RULE@t1,t2: figures at given thresholds')
    r.add_argument('--limit', type=int, help='only the items `ask --limit` chooses (the same subset)')
    r.add_argument('dirs', nargs='+')
    lo = sub.add_parser('loso', help='correctness rules left one source out, read on one half')
    lo.add_argument('--cache', required=True, action='append')
    lo.add_argument('--model')
    lo.add_argument('--rules', help='rule names separated by |')
    lo.add_argument('--read', choices=['dev', 'test'], default='dev')
    lo.add_argument('dirs', nargs='+')
    i = sub.add_parser('import', help='criteria_met answers from committed recordings')
    i.add_argument('--model', required=True)
    i.add_argument('--cache', required=True)
    i.add_argument('--snapshots', nargs='+', required=True)
    i.add_argument('dirs', nargs='+')
    q = sub.add_parser('pair')
    q.add_argument('--port', type=int, required=True)
    q.add_argument('--model', required=True)
    q.add_argument('--cache')
    q.add_argument('--show', action='store_true')
    args = p.parse_args()
    {'ask': cmd_ask, 'report': cmd_report, 'loso': cmd_loso, 'pair': cmd_pair, 'import': cmd_import}[args.cmd](args)


if __name__ == '__main__':
    main()
