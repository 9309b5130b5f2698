#!/usr/bin/env python3
"""Ways of asking a judge about a claim, measured against people, source by
source: the probe behind the choice of ragaliq's default decision rule
(BENCHMARKS.md, "Verdicts that transfer").

It asks a llama.cpp `llama-server` (OpenAI-compatible, on 127.0.0.1) the same
labelled claims in several ways, keeps every raw answer (the first tokens with
their likeliest alternatives) in a cache file, and reads the answers with
several decision rules. Nothing is asked twice: a rule that only reads the
same answers differently costs no call.

    scripts/verdict-designs.py ask --port 8767 --cache bench/designs/qwen15.jsonl \\
        --designs sup,con,three,alt,nosys,minicheck,empty,batch  SET_DIR...
    scripts/verdict-designs.py report --cache bench/designs/qwen15.jsonl SET_DIR...
    scripts/verdict-designs.py ask --port 8767 --model qwen15 --cache bench/designs/qwen15.jsonl \\
        --designs sup,con --con-below 0.55 SET_DIR...      # as ragaliq asks: con only under 0.5

Each answer asked records its seconds and the machine's 1-minute load average.

SET_DIR: folders of labelled-claim JSONL files (`tests/public_claims/<source>/<half>`);
the source is the folder under `public_claims` (or the set's own name), the
half `dev` or `test`.

The prompts are ragaliq's own (`prompts/*.txt`, `system_word.txt`), rendered
as ragaliq renders them (`<` and `>` escaped, several passages numbered `[1]`),
plus the variants under test. The model is asked at temperature 0 for at most
a few tokens with 20 likeliest alternatives per token. Standard library only.
"""
import argparse, hashlib, json, math, os, random, re, sys, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def template(name):
    text = open(os.path.join(ROOT, 'prompts', name + '.txt'), encoding='utf-8').read()
    return text.split('---\n', 1)[1].strip()


SYSTEM_WORD = template('system_word')
SUPPORTED = template('claim_supported')
CONTRADICTED = template('claim_contradicted')


def escape(s):
    return s.replace('<', '&lt;').replace('>', '&gt;')


def document(passages):
    if len(passages) == 1:
        return escape(passages[0].strip())
    return '\n'.join(f'[{i + 1}] {escape(p.strip())}' for i, p in enumerate(passages))


def render(t, **kw):
    for k, v in kw.items():
        t = t.replace('{{' + k + '}}', v)
    return t


def tagged(passages, claim, question):
    """ragaliq's layout: the document first, the claim, then the question."""
    return f'<document>\n{document(passages)}\n</document>\n\n<claim>{escape(claim.strip())}</claim>\n\n{question}'


THREE_Q = 'Does the document support the claim, contradict it, or neither? Answer with one word: "support", "contradict" or "neither".'
ALT_Q = 'Based only on the document, is the claim true? Answer "yes" or "no".'
MINICHECK = ('Determine whether the provided claim is consistent with the corresponding document. '
             'Consistency in this context implies that all information presented in the claim is '
             'substantiated by the document. If not, it should be considered inconsistent.\n'
             'Document: {doc}\nClaim: {claim}\n'
             'Please assess the claim\'s consistency with the document by responding with either "yes" or "no".\nAnswer:')
BATCH_Q = ('For each numbered claim, answer whether the document supports it. Write one line per claim, '
           'in order, as "1. yes" or "1. no", and nothing else.')


def sys_user(user, system=True):
    msgs = [{'role': 'system', 'content': SYSTEM_WORD}] if system else []
    return msgs + [{'role': 'user', 'content': user}]


# Each design: (messages for an item, max tokens). Designs that start with the
# system line and the document share a prefix, which llama-server's prompt
# cache reuses when they are asked one after another.
DESIGNS = {
    'sup': lambda it: (sys_user(render(SUPPORTED, passages=document(it['passages']), claim=escape(it['claim'].strip()))), 3),
    'con': lambda it: (sys_user(render(CONTRADICTED, passages=document(it['passages']), claim=escape(it['claim'].strip()))), 3),
    'three': lambda it: (sys_user(tagged(it['passages'], it['claim'], THREE_Q)), 3),
    'alt': lambda it: (sys_user(tagged(it['passages'], it['claim'], ALT_Q)), 3),
    'nosys': lambda it: (sys_user(render(SUPPORTED, passages=document(it['passages']), claim=escape(it['claim'].strip())), system=False), 3),
    'minicheck': lambda it: (sys_user(MINICHECK.replace('{doc}', '\n'.join(p.strip() for p in it['passages'])).replace('{claim}', it['claim'].strip()), system=False), 3),
    # The content-free prior: the same question over an empty document.
    'empty': lambda it: (sys_user(render(SUPPORTED, passages='', claim=escape(it['claim'].strip()))), 3),
}
ORDER = ['sup', 'con', 'three', 'alt', 'batch', 'nosys', 'minicheck', 'empty']


def batch_messages(passages, claims):
    listed = '\n'.join(f'{i + 1}. {escape(c.strip())}' for i, c in enumerate(claims))
    user = f'<document>\n{document(passages)}\n</document>\n\n<claims>\n{listed}\n</claims>\n\n{BATCH_Q}'
    return sys_user(user), 4 * len(claims) + 4


def load(dirs):
    items = []
    for d in dirs:
        parts = os.path.normpath(d).split(os.sep)
        half = next((p for p in reversed(parts) if p in ('dev', 'test')), '?')
        if 'public_claims' in parts:
            source = parts[parts.index('public_claims') + 1]
        else:
            source = parts[parts.index(half) - 1] if half in parts else parts[-1]
        for base, _, files in sorted(os.walk(d)):
            if 'snapshots' in base.split(os.sep):
                continue
            for f in sorted(files):
                if not f.endswith('.jsonl'):
                    continue
                for line in open(os.path.join(base, f), encoding='utf-8'):
                    if line.strip():
                        it = json.loads(line)
                        it['source'], it['half'] = source, half
                        items.append(it)
    return items


def key(model, messages, max_tokens):
    blob = json.dumps([model, messages, max_tokens], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def ask(port, messages, max_tokens, top=20):
    body = {'messages': messages, 'temperature': 0, 'max_tokens': max_tokens,
            'logprobs': True, 'top_logprobs': top, 'stream': False}
    req = urllib.request.Request(f'http://127.0.0.1:{port}/v1/chat/completions',
                                 data=json.dumps(body).encode(), headers={'Content-Type': 'application/json'})
    for attempt in range(5):
        try:
            with urllib.request.urlopen(req, timeout=600) as r:
                reply = json.load(r)
            break
        except Exception as e:  # a busy or restarting server: try again
            if attempt == 4:
                raise
            time.sleep(2 + 3 * attempt)
    choice = reply['choices'][0]
    tokens = [{'t': c['token'], 'lp': c['logprob'], 'top': [[a['token'], a['logprob']] for a in c.get('top_logprobs', [])]}
              for c in (choice.get('logprobs') or {}).get('content') or []]
    return {'text': choice['message']['content'], 'tokens': tokens,
            'prompt_tokens': reply.get('usage', {}).get('prompt_tokens'),
            'chars': sum(len(m['content']) for m in messages)}


def subset(items, limit):
    """At most `limit` items per source and half, the labels in equal shares
    (as far as each has items), each label's in SHA-256 order of the id (as
    scripts/correctness-designs.py chooses them): chosen by the items' ids,
    never by an answer."""
    if not limit:
        return items
    groups = {}
    for it in items:
        groups.setdefault((it['source'], it['half']), {}).setdefault(it['label'], []).append(it)
    keep = set()
    for g in groups.values():
        share = -(-limit // len(g))
        for label in sorted(g):
            keep.update(id(it) for it in sorted(g[label], key=lambda it: hashlib.sha256(it['id'].encode()).hexdigest())[:share])
    return [it for it in items if id(it) in keep]


def cmd_ask(args):
    items = subset(load(args.dirs), args.limit)
    designs = args.designs.split(',')
    cache = {}
    if os.path.exists(args.cache):
        for line in open(args.cache, encoding='utf-8'):
            e = json.loads(line)
            cache[e['key']] = e
    out = open(args.cache, 'a', encoding='utf-8')
    model = args.model
    done = 0
    started = time.time()

    def one(design, item_ids, messages, max_tokens):
        nonlocal done
        k = key(model, messages, max_tokens)
        if k in cache:
            return cache[k]
        t0 = time.time()
        answer = ask(args.port, messages, max_tokens)
        e = {'key': k, 'model': model, 'design': design, 'ids': item_ids, 'secs': round(time.time() - t0, 3), **answer,
             'load': round(os.getloadavg()[0], 2)}
        cache[k] = e
        out.write(json.dumps(e, ensure_ascii=False) + '\n')
        out.flush()
        done += 1
        if done % 25 == 0:
            print(f'{done} asked, {time.time() - started:.0f} s', file=sys.stderr, flush=True)
        return e

    # The content-free prior with no claim either: one call per template.
    if 'empty' in designs:
        for d in ('sup', 'con', 'three', 'alt', 'nosys'):
            msgs, mt = DESIGNS[d]({'passages': ['N/A'], 'claim': 'N/A'})
            one(d + ':na', [], msgs, mt)
    # Groups of claims with the same passages, for the batched design.
    groups = {}
    for it in items:
        groups.setdefault((it['source'], it['half'], json.dumps(it['passages'])), []).append(it)
    # Per group of claims about the same passages: first every question that
    # starts with the system line and the document (the server's prompt
    # cache keeps the document between them), the batch among them, then the
    # questions laid out otherwise.
    shared = [d for d in ('sup', 'con', 'three', 'alt') if d in designs]
    other = [d for d in ('nosys', 'minicheck', 'empty') if d in designs]
    for (source, half, _), group in sorted(groups.items()):
        for it in group:
            for d in shared:
                if d == 'con' and args.con_below is not None and 'sup' in shared:
                    # ragaliq asks "contradicted?" only where "supported?" read under 0.5
                    r = read_yes_no(one('sup', [it['id']], *DESIGNS['sup'](it)))
                    if r is not None and r[0] >= args.con_below:
                        continue
                msgs, mt = DESIGNS[d](it)
                one(d, [it['id']], msgs, mt)
        if 'batch' in designs:
            for i in range(0, len(group), 8):
                part = group[i:i + 8]
                msgs, mt = batch_messages(part[0]['passages'], [x['claim'] for x in part])
                one('batch', [x['id'] for x in part], msgs, mt)
        if 'docprior' in designs:
            # The content-free prior of this document: the same question
            # with the claim "N/A" (one call per document; its prefix is
            # the cached document).
            msgs, mt = DESIGNS['sup']({'passages': group[0]['passages'], 'claim': 'N/A'})
            one('docprior', [x['id'] for x in group], msgs, mt)
        for it in group:
            for d in other:
                msgs, mt = DESIGNS[d](it)
                one(d, [it['id']], msgs, mt)
    print(f'done: {done} asked in {time.time() - started:.0f} s', file=sys.stderr)


# ---------------------------------------------------------------- reading

def word(tok):
    return re.sub(r'[^a-z0-9]', '', tok.lower())


YES, NO = {'yes'}, {'no'}
# The three answer words; a token counts for one when its letters are the
# word or a prefix of at least two letters that starts no other (Qwen writes
# "contradict" as "contr"+"ad"+"ict" and "neither" as "ne"+"ither").
THREE = {'sup': 'support', 'con': 'contradict', 'nei': 'neither'}


def three_of(tok):
    w = word(tok)
    if len(w) < 2:
        return None
    hits = [k for k, full in THREE.items() if full.startswith(w) or w in (full + 's', full + 'ed', full + 'ing')]
    return hits[0] if len(hits) == 1 else None


MIN_MASS = 0.5  # the answer words must hold at least this share at the position read


def read_yes_no(entry, at=None):
    """P(yes) at the first token that is an answer word (or at `at`), with the
    mass the two words hold there; None when no position carries them."""
    toks = entry['tokens']
    positions = [at] if at is not None else range(len(toks))
    for i in positions:
        if i >= len(toks):
            return None
        t = toks[i]
        if not word(t['t']) and at is None:
            continue  # a space or quote before the word
        yes = sum(math.exp(lp) for tok, lp in t['top'] if word(tok) in YES)
        no = sum(math.exp(lp) for tok, lp in t['top'] if word(tok) in NO)
        if word(t['t']) in YES | NO or yes + no >= MIN_MASS:
            if yes + no == 0:
                return None
            return yes / (yes + no), yes + no
        if at is None:
            return None  # the first word is not an answer: no verdict from it
    return None


def read_three(entry):
    toks = entry['tokens']
    for t in toks:
        if not word(t['t']):
            continue
        mass = {'sup': 0.0, 'con': 0.0, 'nei': 0.0}
        for tok, lp in t['top']:
            k = three_of(tok)
            if k:
                mass[k] += math.exp(lp)
        total = sum(mass.values())
        if total < MIN_MASS and three_of(t['t']) is None:
            return None
        if total == 0:
            return None
        return {k: v / total for k, v in mass.items()}
    return None


def read_batch(entry, n):
    """P(yes) per numbered line: the token after `k.` on each line."""
    toks = entry['tokens']
    out = [None] * n
    text = ''
    expect = 1
    for i, t in enumerate(toks):
        before = text
        text += t['t']
        if expect > n:
            break
        m = re.search(r'(?:^|\n)\s*' + str(expect) + r'\s*[.:)]\s*$', before)
        if m and word(t['t']):
            r = read_yes_no(entry, at=i)
            out[expect - 1] = r[0] if r else None
            expect += 1
    return out


def collect(cache_path, items):
    entries = [json.loads(l) for l in open(cache_path, encoding='utf-8')]
    by = {}
    na = {}
    for e in entries:
        if e['design'].endswith(':na'):
            r = read_yes_no(e)
            na[e['design'][:-3]] = r[0] if r else None
            continue
        if e['design'] == 'batch':
            ps = read_batch(e, len(e['ids']))
            for i, p in zip(e['ids'], ps):
                by.setdefault(i, {})['batch'] = p
            continue
        if e['design'] == 'docprior':
            r = read_yes_no(e)
            for i in e['ids']:
                by.setdefault(i, {})['docprior'] = r[0] if r else None
            continue
        (i,) = e['ids']
        if e['design'] == 'three':
            by.setdefault(i, {})['three'] = read_three(e)
        else:
            r = read_yes_no(e)
            by.setdefault(i, {})[e['design']] = r[0] if r else None
            by[i][e['design'] + '_mass'] = r[1] if r else 0.0
        by[i].setdefault('chars', {})[e['design']] = e['chars']
    return by, na


def logit(p, eps=1e-6):
    p = min(max(p, eps), 1 - eps)
    return math.log(p / (1 - p))


# Each rule: a score per item (higher: more supported), and a default decision
# point on that score. A rule whose default is None needs a fitted threshold.
def rules(na):
    def prior_ratio(d):
        return lambda a: None if a.get(d) is None or a.get('empty') is None else logit(a[d]) - logit(a['empty'])
    return {
        'sup': (lambda a: a.get('sup'), 0.5),
        'nosys': (lambda a: a.get('nosys'), 0.5),
        'minicheck': (lambda a: a.get('minicheck'), 0.5),
        'alt': (lambda a: a.get('alt'), 0.5),
        'mean2': (lambda a: None if a.get('sup') is None or a.get('alt') is None else (a['sup'] + a['alt']) / 2, 0.5),
        'three': (lambda a: None if not a.get('three') else a['three']['sup'], None),
        'three_argmax': (lambda a: None if not a.get('three') else (1.0 if max(a['three'], key=a['three'].get) == 'sup' else 0.0), 0.5),
        'sup_vs_con': (lambda a: None if a.get('sup') is None or a.get('con') is None else logit(a['sup']) - logit(a['con']), 0.0),
        'prior_empty': (prior_ratio('sup'), 0.0),
        'prior_na': (lambda a: None if a.get('sup') is None or na.get('sup') is None else logit(a['sup']) - logit(na['sup']), 0.0),
        'prior_doc': (lambda a: None if a.get('sup') is None or a.get('docprior') is None else logit(a['sup']) - logit(a['docprior']), 0.0),
        'batch': (lambda a: a.get('batch'), 0.5),
    }


def kappa(pairs):
    """Cohen's kappa of two yes/no lists [(person, judge)]."""
    n = len(pairs)
    if n == 0:
        return float('nan')
    po = sum(p == j for p, j in pairs) / n
    pp = sum(p for p, _ in pairs) / n
    pj = sum(j for _, j in pairs) / n
    pe = pp * pj + (1 - pp) * (1 - pj)
    return 0.0 if pe == 1 else (po - pe) / (1 - pe)


def auc(scored):
    pos = [s for s, y in scored if y]
    neg = [s for s, y in scored if not y]
    if not pos or not neg:
        return float('nan')
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


def best_threshold(scored):
    """The threshold that maximises kappa, in the middle of its gap."""
    values = sorted(set(s for s, _ in scored))
    cuts = [values[0] - 1e-9] + [(a + b) / 2 for a, b in zip(values, values[1:])] + [values[-1] + 1e-9]
    best = max(cuts, key=lambda c: (kappa([(y, s >= c) for s, y in scored]), -abs(c)))
    return best, kappa([(y, s >= best) for s, y in scored])


def balanced_fit(groups):
    """A threshold fitted on several sources at once, each source weighted
    equally (a source with more items must not decide alone): the cut that
    maximises the mean kappa over the sources."""
    values = sorted(set(s for g in groups for s, _ in g))
    if not values:
        return None
    step = max(1, len(values) // 400)
    cuts = [values[0] - 1e-9] + [(a + b) / 2 for a, b in zip(values[::step], values[step::step])] + [values[-1] + 1e-9]
    return max(cuts, key=lambda c: sum(kappa([(y, s >= c) for s, y in g]) for g in groups) / len(groups))


def cmd_report(args):
    items = load(args.dirs)
    by, na = collect(args.cache, items)
    if args.contradiction:
        rule, t = args.contradiction.split(':')
        contradiction_report(items, by, rules(na)[rule], float(t))
        return
    sources = sorted(set(it['source'] for it in items))
    halves = sorted(set(it['half'] for it in items))
    print(f'content-free P(yes) ("N/A" document and claim): ' + ', '.join(f'{d} {p:.3f}' for d, p in na.items() if p is not None))
    table = rules(na)
    chosen = args.rules.split(',') if args.rules else list(table)
    for rule in chosen:
        score, default = table[rule]
        per = {}
        for it in items:
            a = by.get(it['id'])
            s = score(a) if a else None
            positive = it['label'] == 'supported'
            per.setdefault((it['source'], it['half']), []).append((s, positive))
        answered = {k: [(s, y) for s, y in v if s is not None] for k, v in per.items()}
        if not any(answered.values()):
            continue
        print(f'\n## {rule}' + (f' (default decision point {default})' if default is not None else ' (no default: fitted)'))
        print(f'{"source":<14}{"half":<6}{"n":>5}{"unread":>7}{"yes%":>6}{"people%":>8}{"AUC":>7}{"k@default":>10}{"k@LOSO":>8}{"LOSO t":>8}{"k@own best":>11}{"own t":>8}')
        worst = {}
        for source in sources:
            # Fitted on every other source's dev half, each source weighted equally.
            others = [answered.get((o, 'dev'), []) for o in sources if o != source and answered.get((o, 'dev'))]
            t_loso = balanced_fit(others)
            for half in halves:
                sc = answered.get((source, half))
                if not sc:
                    continue
                n_all = len(per[(source, half)])
                unread = n_all - len(sc)
                k_def = kappa([(y, s >= default) for s, y in sc]) if default is not None else float('nan')
                k_loso = kappa([(y, s >= t_loso) for s, y in sc]) if t_loso is not None else float('nan')
                t_best, k_best = best_threshold(sc)
                cut = default if default is not None else t_loso
                yes = sum(s >= cut for s, _ in sc) / len(sc) if cut is not None else float('nan')
                ppl = sum(y for _, y in sc) / len(sc)
                print(f'{source:<14}{half:<6}{n_all:>5}{unread:>7}{100*yes:>6.0f}{100*ppl:>8.0f}{auc(sc):>7.3f}{k_def:>10.3f}{k_loso:>8.3f}{t_loso if t_loso is not None else float("nan"):>8.3f}{k_best:>11.3f}{t_best:>8.3f}')
                for name, k in (('default', k_def), ('loso', k_loso)):
                    if not math.isnan(k):
                        worst.setdefault((half, name), []).append((k, source))
        for (half, name), ks in sorted(worst.items()):
            k, s = min(ks)
            print(f'  worst {name:<8} {half}: {k:.3f} ({s}); mean {sum(x for x, _ in ks) / len(ks):.3f}')


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest='cmd', required=True)
    a = sub.add_parser('ask')
    a.add_argument('--port', type=int, required=True)
    a.add_argument('--model', required=True, help='a name for the cache (e.g. qwen15)')
    a.add_argument('--cache', required=True)
    a.add_argument('--designs', default=','.join(ORDER))
    a.add_argument('--con-below', type=float, help='ask con only where sup reads under this (ragaliq: 0.5)')
    a.add_argument('--limit', type=int, help='at most this many items per source and half, labels in equal shares')
    a.add_argument('dirs', nargs='+')
    r = sub.add_parser('report')
    r.add_argument('--cache', required=True)
    r.add_argument('--rules')
    r.add_argument('--contradiction', metavar='RULE:THRESHOLD', help='also the contradiction rules, support decided by RULE at THRESHOLD (e.g. sup:0.5)')
    r.add_argument('dirs', nargs='+')
    args = p.parse_args()
    {'ask': cmd_ask, 'report': cmd_report}[args.cmd](args)



# ------------------------------------------------------------ contradiction

def contradiction_report(items, by, support_rule, t_support, rules_out=print):
    """For sources whose people said contradicted (three labels, or
    supported / contradicted), how each rule for "contradicted" fares once
    `support_rule` at `t_support` has decided what is supported: its
    precision (of the claims called contradicted, the share people call
    contradicted), its recall, and the three-way kappa (supported, no
    evidence, contradicted)."""
    score, _ = support_rule
    cands = {
        'P(con) >= 0.25 (today)': lambda a: a.get('con') is not None and a['con'] >= 0.25,
        'P(con) >= 0.5': lambda a: a.get('con') is not None and a['con'] >= 0.5,
        'P(con) > P(sup)': lambda a: a.get('con') is not None and a.get('sup') is not None and a['con'] > a['sup'],
        'P(con) > P(sup) and >= 0.5': lambda a: a.get('con') is not None and a.get('sup') is not None and a['con'] > a['sup'] and a['con'] >= 0.5,
        'three-way: con likeliest': lambda a: bool(a.get('three')) and max(a['three'], key=a['three'].get) == 'con',
        'three-way: P(con) > P(sup)': lambda a: bool(a.get('three')) and a['three']['con'] > a['three']['sup'],
        'P(con) >= 0.35': lambda a: a.get('con') is not None and a['con'] >= 0.35,
        'P(con) >= 0.4': lambda a: a.get('con') is not None and a['con'] >= 0.4,
        'P(con) > P(sup), >= 0.35': lambda a: a.get('con') is not None and a.get('sup') is not None and a['con'] > a['sup'] and a['con'] >= 0.35,
        'P(con) > 2 P(sup)': lambda a: a.get('con') is not None and a.get('sup') is not None and a['con'] > 2 * a['sup'],
        'P(con) > P(sup) + 0.2': lambda a: a.get('con') is not None and a.get('sup') is not None and a['con'] > a['sup'] + 0.2,
        'three-way: P(con) >= 0.5': lambda a: bool(a.get('three')) and a['three']['con'] >= 0.5,
    }
    sources = sorted(set(it['source'] for it in items if it['label'] == 'contradicted'))
    for half in sorted(set(it['half'] for it in items)):
        rules_out(f'\n### contradicted, {half} halves (support decided by the chosen rule at {t_support:.3f})')
        rules_out(f'{"rule":<30}' + ''.join(f'{s + " P/R/k3":>26}' for s in sources))
        for name, rule in cands.items():
            row = f'{name:<30}'
            for source in sources:
                its = [it for it in items if it['source'] == source and it['half'] == half and by.get(it['id'])]
                called, right, people, pairs = 0, 0, 0, []
                for it in its:
                    a = by[it['id']]
                    s = score(a)
                    if s is None:
                        continue
                    if s >= t_support:
                        verdict = 'supported'
                    elif rule(a):
                        verdict = 'contradicted'
                    else:
                        verdict = 'no_evidence'
                    person = it['label'] if it['label'] in ('supported', 'contradicted') else 'no_evidence'
                    pairs.append((person, verdict))
                    called += verdict == 'contradicted'
                    right += verdict == 'contradicted' and person == 'contradicted'
                    people += person == 'contradicted'
                prec = right / called if called else float('nan')
                rec = right / people if people else float('nan')
                row += f'{prec:>10.2f}{rec:>8.2f}{kappa_multi(pairs):>8.3f}'
            rules_out(row)


def kappa_multi(pairs):
    labels = sorted(set(x for p in pairs for x in p))
    n = len(pairs)
    if n == 0:
        return float('nan')
    po = sum(a == b for a, b in pairs) / n
    pe = sum((sum(a == l for a, _ in pairs) / n) * (sum(b == l for _, b in pairs) / n) for l in labels)
    return 0.0 if pe == 1 else (po - pe) / (1 - pe)


if __name__ == '__main__':
    main()
