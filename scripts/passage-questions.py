#!/usr/bin/env python3
"""Which question should context precision ask of a passage? Its own
("does the document contain information that helps answer the question?",
`passage_relevant`) or abstention's ("does the document contain the answer
to the question?", `passages_answer`), with plain word overlap beside both,
on every labelled passage source we hold: ours (single questions,
`tests/labelled_passages`), MTRAG and MTRAG-UN (conversation turns,
`tests/public_conversations/*/test/passages.jsonl`). BENCHMARKS.md ("Which
question context precision asks") holds the result.

    scripts/passage-questions.py ask --port 8767 --model qwen15 [--conversations-dev]   # ours: passages_answer, all 124 items
    scripts/passage-questions.py ask --port 8766 --model qwen05
    scripts/passage-questions.py ask --port 8767 --model qwen15 --conversations-dev --old-question-too
    scripts/passage-questions.py import-before --model qwen15 --rev 229c593   # the old question's recorded answers on ours
    scripts/passage-questions.py report                           # offline, from the caches
    scripts/passage-questions.py choose                           # threshold and band, leave one source out, dev halves
    scripts/passage-questions.py band                             # the band on ours alone, from the recordings

Nothing is fitted on a held-out source: each question is read at the cut a
user of it gets (context precision at the judge file's shipped passage
threshold, itself fitted on our dev half, so ours is read on its test half
only; abstention's question at its fixed `ANSWERS_AT`), plain overlap at the
cut that is best over the *other* sources' items, and AUC needs no cut. The
worst source decides.

Where our passages' context-precision answers come from: the committed
calibration recordings (`tests/labelled_passages/*/snapshots/<model>/`),
read as ragaliq read them (`checked: read: P(yes) ...`), so they are exactly
what `cargo ragaliq calibrate` replays. `ask --check N` asks N of them again
through this script's port of the prompt, to show the two agree. The
conversation sources' answers are conversation-designs.py's cache
(`pass_bare`, `ans_bare`): the same items its passages tables read.
Standard library only.
"""
import argparse, json, os, re, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from conversation_turns import sibling  # noqa: E402

cd = sibling('conversation-designs')
vd, bd = cd.vd, cd.bd
OURS = os.path.join(ROOT, 'tests', 'labelled_passages')


def ours(half):
    """Our labelled passages as conversation-designs' items (one passage, no history)."""
    out = []
    for line in open(os.path.join(OURS, half, 'passages.jsonl'), encoding='utf-8'):
        if line.strip():
            it = json.loads(line)
            out.append({'id': it['id'], 'query': it['query'], 'passages': [it['passage']], 'history': [],
                        'label': 'relevant' if it['label'] == 'relevant' else 'irrelevant',
                        'kind': 'first', 'source': 'ours', 'half': half, 'metric': 'passages'})
    return out


def recorded(half, model):
    """{(query, passage): P(yes)} from the calibration recording of `model`
    (`qwen15`, `qwen05`; the dev halves were recorded by the judge files
    before their thresholds were fitted, `<model>-unfitted`: the same
    questions) on our `half`."""
    for name in (model, f'{model}-unfitted'):
        path = os.path.join(OURS, half, 'snapshots', name, 'passages.jsonl.snap')
        if os.path.exists(path):
            break
    else:
        return {}
    text = open(path, encoding='utf-8').read()
    head, body = text.split('\nexchanges:\n', 1)
    passages = dict(scalars(head.split('\npassages:\n', 1)[1], r'- (P\d+): ', '    '))
    out = {}
    for ex in ('\n' + body).split('\n- task: ')[1:]:
        (_, q), = scalars(ex, r'    (query): ', '      ')
        p = re.search(r'^    passages:\n    - (P\d+)$', ex, re.M).group(1)
        read = re.search(r'read: P\(yes\) ([0-9.]+)', ex)
        if read:
            out[(q, passages[p])] = float(read.group(1))
    return out


def scalars(text, key, indent):
    """[(name, text)] of the YAML scalars at lines matching `key` (a regex
    with one group, the name): plain, double-quoted, or folded (`>-`) over
    the following lines indented by `indent`, as the recordings write
    one-line text."""
    out, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        m = re.match('^' + key + '(.*)$', line)
        if not m:
            continue
        name, v = m.group(1), m.group(2)
        if v == '>-':
            parts = []
            for more in lines[i + 1:]:
                if not more.startswith(indent):
                    break
                parts.append(more.strip())
            v = ' '.join(parts)
        elif v.startswith('"'):
            v = json.loads(v)
        elif v.startswith("'"):
            v = v[1:-1].replace("''", "'")
        out.append((name, v))
    return out


def cmd_import_before(args):
    """Context precision's answers on our passages to the question it asked
    before `passage_relevant` version 2, from the calibration recordings as
    commit REV holds them (`git show`), into the model's cache under the
    prompt that question sends (`pass_bare`): the recordings now hold the
    question asked since, and the comparison needs both."""
    import subprocess
    miniyaml = sibling('miniyaml')
    judge = {'qwen15': 'qwen15', 'qwen05': 'qwen05'}[args.model]
    by_text = {(it['query'], it['passages'][0]): it for it in ours('dev') + ours('test')}
    path = cache_path(args.model)
    cache = cd.read_cache([path])
    out = open(path, 'a', encoding='utf-8')
    added = 0
    for half in ('dev', 'test'):
        for name in (judge, f'{judge}-unfitted'):
            snap = f'tests/labelled_passages/{half}/snapshots/{name}/passages.jsonl.snap'
            try:
                text = subprocess.run(['git', 'show', f'{args.rev}:{snap}'], cwd=ROOT, check=True,
                                      capture_output=True, text=True).stdout
            except subprocess.CalledProcessError:
                continue
            rec = miniyaml.load_snapshot(text)
            refs = {k: v for p in rec.get('passages') or [] for k, v in p.items()}
            for ex in rec.get('exchanges') or []:
                if ex.get('task') != 'passage_relevant' or not ex.get('template', '').startswith('passage_relevant@1'):
                    continue
                it = by_text[(ex['asked']['query'], refs[ex['asked']['passages'][0]])]
                k = vd.key(args.model, cd.messages(cd.passage_prompt(it, 'bare')), 3)
                if k in cache:
                    continue
                tokens = [{'t': t['token'], 'lp': t['logprob'], 'top': [[a, l] for a, l in (t.get('top') or {}).items()]}
                          for t in ex.get('probabilities') or []]
                e = {'key': k, 'model': args.model, 'design': 'pass_bare', 'ids': [it['id']], 'secs': None,
                     'text': ex.get('reply', ''), 'tokens': tokens, 'from': f'{snap} at {args.rev}'}
                cache[k] = e
                out.write(json.dumps(e, ensure_ascii=False) + '\n')
                added += 1
            break
    print(f'{added} answers added to {path}', file=sys.stderr)


def cache_path(model):
    return os.path.join(ROOT, 'bench', 'conversations', f'{model}.jsonl')


def cmd_ask(args):
    items = ours('dev') + ours('test')
    path = cache_path(args.model)
    cache = cd.read_cache([path])
    out = open(path, 'a', encoding='utf-8')
    asked, started = 0, time.time()

    def one(design, it):
        nonlocal asked
        _, build, max_tokens = cd.DESIGNS[design]
        msgs = cd.messages(build(it))
        k = vd.key(args.model, msgs, max_tokens)
        if k in cache:
            return cache[k]
        t0 = time.time()
        answer = vd.ask(args.port, msgs, max_tokens)
        e = {'key': k, 'model': args.model, 'design': design, 'ids': [it['id']], 'secs': round(time.time() - t0, 3),
             **answer, 'load': round(os.getloadavg()[0], 2)}
        cache[k] = e
        out.write(json.dumps(e, ensure_ascii=False) + '\n')
        out.flush()
        asked += 1
        if asked % 25 == 0:
            print(f'{asked} asked, {time.time() - started:.0f} s', file=sys.stderr, flush=True)
        return e

    # The port against the recordings first: a few items' passage_relevant
    # asked again, P(yes) set beside the recorded reading.
    rec = {**recorded('dev', args.model), **recorded('test', args.model)}
    for it in items[:args.check]:
        got = bd.p_yes(one('pass_bare', it))
        want = rec.get((it['query'], it['passages'][0]))
        print(f'check {it["id"]}: asked again {got:.3f}, recorded {want}', file=sys.stderr)
    for it in items:
        one('ans_bare', it)
    # The conversation sources' dev halves (conversation-designs' subset of
    # 20 items a cell), so that a cut can be chosen on dev halves only,
    # every source held out in turn.
    if args.conversations_dev:
        for it in cd.load_items(20):
            if it['metric'] == 'passages' and it['half'] == 'dev':
                one('ans_bare', it)
                if args.old_question_too:
                    one('pass_bare', it)
    print(f'done: {asked} asked in {time.time() - started:.0f} s', file=sys.stderr)


def scores(model):
    """{source: [(design, score, relevant?)]} over every item answered;
    `both` (the two questions' P(yes) averaged) where an item has both."""
    cache = cd.read_cache([cache_path(model)])
    got = {}

    def add(source, it, readings):
        y = it['label'] == 'relevant'
        readings['overlap'] = cd.overlap(it['query'], it['passages'][0]) or 0.0
        if 'pass_bare' in readings and 'ans_bare' in readings:
            readings['both'] = (readings['pass_bare'] + readings['ans_bare']) / 2
        got.setdefault(source, []).extend((d, sc, y) for d, sc in readings.items())

    def asked(design, it):
        e = cache.get(vd.key(model, cd.messages(cd.DESIGNS[design][1](it)), cd.DESIGNS[design][2]))
        return None if e is None else bd.p_yes(e)

    for it in ours('dev') + ours('test'):
        readings = {d: asked(d, it) for d in ('pass_bare', 'ans_bare')}
        add(f'ours-{it["half"]}', it, {d: p for d, p in readings.items() if p is not None})
    for it in cd.load_items(20):
        if it['metric'] == 'passages':
            readings = {d: asked(d, it) for d in ('pass_bare', 'ans_bare')}
            source = it['source'] if it['half'] == 'test' else f'{it["source"]}-dev'
            add(source, it, {d: p for d, p in readings.items() if p is not None})
    return got


def balanced(scored, t):
    """Mean of the agreement on each label (the sources' label mixes differ)."""
    pos = [s >= t for s, y in scored if y]
    neg = [s < t for s, y in scored if not y]
    if not pos or not neg:
        return None
    return (sum(pos) / len(pos) + sum(neg) / len(neg)) / 2


def best_cut(groups):
    """The cut that maximises the mean balanced agreement over the groups."""
    cuts = sorted({s for g in groups for s, _ in g})
    return max(cuts, key=lambda t: sum(balanced(g, t) or 0 for g in groups))


def cmd_report(args):
    """Each question at the cut a user of it gets, on every source's test
    half (ours: the half its threshold was not fitted on), AUC beside it;
    plain word overlap at the cut best over the *other* sources' dev
    halves. `choose` chooses the judge's cuts the same way."""
    rows = (('pass_bare', 'before', 'context precision\'s question before ("helps answer?"), its shipped cut'),
            ('ans_bare', 'now', 'context precision\'s question now ("contains the answer?"), its shipped cut'),
            ('ans_bare', 'abstention', '"contains the answer?" at abstention\'s fixed cut'),
            ('overlap', 'others', 'plain: question words in the passage, cut chosen on the other sources\' dev halves'))
    for model in args.models.split(','):
        got = scores(model)
        cuts = {'before': cd.shipped_passage_threshold(model), 'now': judge_threshold(model),
                'abstention': cd.shipped_answers_threshold()}
        sources = [s for s in ('ours-test', 'mtrag', 'mtrag-un') if s in got]
        print(f'\n### {model}: one passage at a time, test halves\n')
        print('Balanced agreement (the mean of the agreement on people\'s relevant passages and on the irrelevant '
              'ones, as the sources\' mixes differ); relevant / irrelevant and n beside it, the cut, and AUC.\n')
        print('| question | ' + ' | '.join(sources) + ' | worst |')
        print('|' + ' --- |' * (len(sources) + 2))
        for design, rule, label in rows:
            cells, worst = [], 1.0
            for s in sources:
                scored = [(sc, y) for d, sc, y in got[s] if d == design]
                if rule == 'others':
                    base = s.replace('-test', '')
                    t = best_cut([[(sc, y) for d, sc, y in got[o] if d == design]
                                  for o in got if o.endswith('-dev') and o[:-4] != base])
                else:
                    t = cuts[rule]
                b = balanced(scored, t) if scored else None
                if b is None:
                    cells.append('–')
                    worst = None
                    continue
                worst = None if worst is None else min(worst, b)
                pos = [sc >= t for sc, y in scored if y]
                neg = [sc < t for sc, y in scored if not y]
                cells.append(f'**{100 * b:.0f}%** ({100 * sum(pos) / len(pos):.0f}% / {100 * sum(neg) / len(neg):.0f}%, '
                             f'{len(pos)}/{len(neg)}) at {t:.2f}, AUC {bd.auc(scored):.2f}')
            low = '–' if worst is None else f'{100 * worst:.0f}%'
            print(f'| {label} | ' + ' | '.join(cells) + f' | {low} |')


def judge_threshold(model):
    """The passage threshold `tests/judges/<model>.toml` ships now (for
    the question context precision asks since `passage_relevant` version 2)."""
    path = os.path.join(ROOT, 'tests', 'judges', f'{model}.toml')
    m = re.search(r'^passage_threshold\s*=\s*([0-9.]+)', open(path, encoding='utf-8').read(), re.M)
    return float(m.group(1)) if m else 0.5


def cell(model, half):
    """Our `half` as band-designs' `Cell` reads a source: P(yes) from the
    committed calibration recording, people's labels."""
    rec = recorded(half, model)
    c = object.__new__(bd.Cell)
    c.kind, c.source, c.half, c.model = 'passages', 'ours', half, model
    c.items = [it for it in ours(half) if (it['query'], it['passages'][0]) in rec]
    c.people = [it['label'] == 'relevant' for it in c.items]
    c.p = [rec[(it['query'], it['passages'][0])] for it in c.items]
    c.found = [False] * len(c.items)
    c.plain = None
    c.auc = bd.auc(list(zip(c.p, c.people)))
    return c


def cmd_band(args):
    """Context precision's band for each kit model, chosen by band-designs'
    rule (`sides`: the largest dev coverage at which each side, decided yes
    and decided no, has decided accuracy >= 0.9 on its own; one source, our
    dev half, as before) on the answers of the question context precision
    asks now, and read on our test half."""
    for model in args.models.split(','):
        t = judge_threshold(model)
        dev, test = cell(model, 'dev'), cell(model, 'test')
        band = choose_band([list(zip(dev.p, dev.people))], t)
        for half, c in (('dev', dev), ('test', test)):
            f = c.figures(band)
            side = lambda s: f'{f[s + "_n"]} at {bd.fmt(f[s + "_acc"])}'
            print(f'{model} at {t}: band {bd.band_name(band)}; {half} (n {len(c)}, AUC {bd.fmt(c.auc)}): '
                  f'decided {f["decided"]} ({100 * f["coverage"]:.0f}%), yes {side("yes")}, no {side("no")}')


def dev_and_test(model, design='ans_bare'):
    """{source: {half: [(P(yes), relevant?)]}} of one question (`ans_bare`:
    the one context precision asks now; `pass_bare`: the one before), from
    the model's cache: our two halves, and MTRAG's and MTRAG-UN's (20 items
    a cell)."""
    cache = cd.read_cache([cache_path(model)])
    out = {}
    build = cd.DESIGNS[design][1]

    def add(source, half, it):
        e = cache.get(vd.key(model, cd.messages(build(it)), 3))
        p = None if e is None else bd.p_yes(e)
        if p is not None:
            out.setdefault(source, {}).setdefault(half, []).append((p, it['label'] == 'relevant'))

    for half in ('dev', 'test'):
        for it in ours(half):
            add('ours', half, it)
    for it in cd.load_items(20):
        if it['metric'] == 'passages':
            add(it['source'], it['half'], it)
    return {s: h for s, h in out.items() if 'dev' in h and 'test' in h}


def choose_band(devs, t):
    """band-designs' per-side rule over several dev halves: the band around
    `t` with the largest mean coverage at which each side of every one has
    decided accuracy >= 0.9 on its own."""
    best = None
    for b in bd.grid(t):
        fs = [side_figures(d, b) for d in devs]
        if not all(all(f[k] is None or f[k] >= bd.ACC_MIN for k in ('yes_acc', 'no_acc')) for f in fs):
            continue
        cov = sum(f['coverage'] for f in fs) / len(fs)
        width = 9 if b == bd.NEVER else b[1] - b[0]
        centre = 9 if b == bd.NEVER else abs((b[0] + b[1]) / 2 - t)
        score = (round(cov, 9), -round(width, 9), -round(centre, 9))
        if best is None or score > best[0]:
            best = (score, b)
    return best[1]


def side_figures(scored, band):
    yes = [y for p, y in scored if bd.decide(band, p) is True]
    no = [not y for p, y in scored if bd.decide(band, p) is False]
    return {'coverage': (len(yes) + len(no)) / len(scored), 'yes_n': len(yes), 'no_n': len(no),
            'yes_acc': sum(yes) / len(yes) if yes else None, 'no_acc': sum(no) / len(no) if no else None}


def cmd_choose(args):
    """The passage threshold and band chosen on dev halves, leave one
    source out: for each source, the cut (best mean balanced agreement, on
    band-designs' 0.025 grid) and band (band-designs' per-side rule) chosen
    on the *other* sources' dev halves, read on its test half; beside it,
    both chosen on our dev half alone, as the kit's thresholds and bands
    for passages were before. Last, what ships: both chosen on every
    source's dev half."""
    for model, design in ((m, d) for m in args.models.split(',') for d in ('ans_bare', 'pass_bare')):
        data = dev_and_test(model, design)
        sources = sorted(data)
        if len(sources) < 3:
            continue  # only our passages were asked: nothing to hold out
        question = {'ans_bare': 'contains the answer? (asked now)', 'pass_bare': 'helps answer? (asked before)'}[design]
        print(f'\n### {model}, {question}: threshold and band, chosen on dev halves ({", ".join(sources)})\n')
        print('| held out | chosen on | threshold | test: balanced agreement | band | test: decided | yes: n, accuracy | no: n, accuracy |')
        print('| --- | --- | --- | --- | --- | --- | --- | --- |')

        def chosen(over):
            devs = [data[o]['dev'] for o in over]
            # On band-designs' grid (0.025 steps), as a threshold is written.
            t = max((round(0.025 * i, 3) for i in range(1, 40)),
                    key=lambda c: (sum(balanced(d, c) or 0 for d in devs), -abs(c - 0.5)))
            return t, choose_band(devs, t)

        for held in sources:
            ways = [[o for o in sources if o != held]] + ([['ours']] if held != 'ours' else [])
            for over in ways:
                t, band = chosen(over)
                test = data[held]['test']
                f = side_figures(test, band)
                print(f'| {held} | {", ".join(over)} | {t:.3g} | {100 * balanced(test, t):.0f}% | {bd.band_name(band)} | '
                      f'{100 * f["coverage"]:.0f}% | {f["yes_n"]}, {bd.fmt(f["yes_acc"])} | {f["no_n"]}, {bd.fmt(f["no_acc"])} |')
        t, band = chosen(sources)
        print(f'| none: what ships | {", ".join(sources)} | {t:.3g} | – | {bd.band_name(band)} | – | – | – |')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    a = sub.add_parser('ask')
    a.add_argument('--port', type=int, required=True)
    a.add_argument('--model', required=True)
    a.add_argument('--check', type=int, default=6)
    a.add_argument('--conversations-dev', action='store_true',
                   help="also MTRAG's and MTRAG-UN's dev halves (20 items a cell)")
    a.add_argument('--old-question-too', action='store_true',
                   help="there, also the question context precision asked before (`pass_bare`)")
    r = sub.add_parser('report')
    r.add_argument('--models', default='qwen15,qwen05')
    b = sub.add_parser('band')
    b.add_argument('--models', default='qwen15,qwen05')
    c = sub.add_parser('choose')
    c.add_argument('--models', default='qwen15,qwen05')
    i = sub.add_parser('import-before')
    i.add_argument('--model', required=True)
    i.add_argument('--rev', required=True)
    args = ap.parse_args()
    {'ask': cmd_ask, 'report': cmd_report, 'band': cmd_band, 'choose': cmd_choose,
     'import-before': cmd_import_before}[args.cmd](args)


if __name__ == '__main__':
    main()
