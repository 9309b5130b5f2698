#!/usr/bin/env python3
"""More than one reading of the same claim (issue 47 item 2), measured
leave one source out beside the single question, with the calls per claim.
No server: the answers are the caches `bench/designs/*.jsonl` and the
imported recordings `bench/bands/recorded-*.jsonl` (each cached answer is
matched by the exact question ragaliq's scripts ask now, so an answer to an
older wording is never read).

A signal gives each claim two readings: `yes` (decided supported at or
above the band's top) and `no` (decided not supported under its bottom);
a single question gives the same reading twice. The band is chosen as the
shipped bands are (`scripts/band-designs.py`, rule `sides`): the largest
mean coverage at which each side of every other source agrees with people
at least 0.9 of the time on its own; then read on the held-out source.

The phrasings (`alt`, `nosys`, `minicheck`) were asked on the dev halves of
five public sources only, so every signal is measured there, on the items
every signal has, one source held out at a time: the chooser never sees the
held-out source. The 0.5B's answers cover fewer of them: its row is
measured on its own items, with the single question beside it on the same.

    scripts/band-signals.py            # the table of bench/bands/README.md
"""
import importlib.util, json, os, statistics, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def module(name):
    spec = importlib.util.spec_from_file_location(name.replace('-', '_'), os.path.join(HERE, name + '.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


bd = module('band-designs')
vd = module('verdict-designs')
T = bd.THRESHOLD['claims']
SOURCES = ['begin', 'dialfact', 'expertqa', 'faithbench', 'fm2']
HALF = 'dev'


def answers(model, designs):
    """(design, item id) -> P(yes) for the cached answers whose key is the
    question asked now, and the recordings' imported answers."""
    by_key = {}
    for pat in ('bench/designs/{m}.jsonl',):
        path = os.path.join(ROOT, pat.format(m=model))
        for line in open(path, encoding='utf-8'):
            e = json.loads(line)
            if e['design'] in designs and e['model'] == model:
                by_key[e['key']] = e
    rec = {}
    for pat in bd.RECORDED:
        path = os.path.join(ROOT, pat.format(m=model))
        if os.path.exists(path):
            for line in open(path, encoding='utf-8'):
                e = json.loads(line)
                if e['design'] in designs and e['model'] == model and e['ids']:
                    rec.setdefault((e['design'], e['ids'][0]), e)
    out = {}
    for it in bd.load('claims'):
        if it['half'] != HALF or it['source'] not in SOURCES:
            continue
        for d in designs:
            e = rec.get((d, it['id']))
            if e is None:
                msgs, mt = vd.DESIGNS[d](it)
                e = by_key.get(vd.key(model, msgs, mt))
            if e is not None:
                p = bd.p_yes(e)
                if p is not None:
                    out[(d, it['id'])] = p
    return out


def signals():
    a15 = answers('qwen15', ('sup', 'con', 'alt', 'nosys', 'minicheck'))
    a05 = answers('qwen05', ('sup',))
    g = lambda d, i, a=a15: a.get((d, i))

    def need(*xs):
        return None if any(x is None for x in xs) else xs
    sig = {
        # name: (calls per claim, fn(id) -> (yes reading, no reading) or None)
        'one question (P(supported))': (1, lambda i: need(g('sup', i), g('sup', i))),
        'support and contradiction: a no both agree on (P(con) >= 0.5)':
            (None, lambda i: None if need(g('sup', i), g('con', i)) is None else
             (g('sup', i), g('sup', i) if g('con', i) >= 0.5 else 1.0)),
        'support and contradiction: the mean of P(sup) and 1 - P(con)':
            (None, lambda i: None if need(g('sup', i), g('con', i)) is None else
             (g('sup', i), (g('sup', i) + 1 - g('con', i)) / 2)),
        'three phrasings, mean (sup, alt, nosys)':
            (3, lambda i: None if need(g('sup', i), g('alt', i), g('nosys', i)) is None else
             ((g('sup', i) + g('alt', i) + g('nosys', i)) / 3,) * 2),
        'three phrasings, all agree (min for yes, max for no)':
            (3, lambda i: None if need(g('sup', i), g('alt', i), g('nosys', i)) is None else
             (min(g('sup', i), g('alt', i), g('nosys', i)), max(g('sup', i), g('alt', i), g('nosys', i)))),
        'four phrasings, mean (sup, alt, nosys, minicheck)':
            (4, lambda i: None if need(g('sup', i), g('alt', i), g('nosys', i), g('minicheck', i)) is None else
             ((g('sup', i) + g('alt', i) + g('nosys', i) + g('minicheck', i)) / 4,) * 2),
        'MiniCheck-style phrasing alone': (1, lambda i: need(g('minicheck', i), g('minicheck', i))),
        '0.5B and 1.5B, both agree': (2, lambda i: None if need(g('sup', i), g('sup', i, a05)) is None else
                                       (min(g('sup', i), g('sup', i, a05)), max(g('sup', i), g('sup', i, a05)))),
        'one question, on the 0.5B\'s items (the baseline of the row above)':
            (1, lambda i: None if need(g('sup', i), g('sup', i, a05)) is None else (g('sup', i), g('sup', i))),
    }
    return sig, a15


def decide(band, r):
    if band == bd.NEVER:
        return None
    lo, hi = band
    if r[0] >= hi:
        return True
    if r[1] < lo:
        return False
    return None


def figures(items, band):
    """Coverage and each side's decided count and accuracy."""
    d = [(y, decide(band, r)) for y, r in items]
    f = {'n': len(d), 'coverage': sum(v is not None for _, v in d) / len(d) if d else 0.0}
    for side, val in (('yes', True), ('no', False)):
        ps = [y for y, v in d if v is val]
        f[side + '_n'] = len(ps)
        f[side + '_acc'] = (sum(y is val for y in ps) / len(ps)) if ps else None
    return f


def meets(f):
    return all(f[s + '_acc'] is None or f[s + '_acc'] >= bd.ACC_MIN for s in ('yes', 'no'))


def choose(cells):
    best = None
    for b in bd.grid(T):
        fs = [figures(c, b) for c in cells]
        if not all(meets(f) for f in fs):
            continue
        cov = sum(f['coverage'] for f in fs) / len(fs)
        width = 9 if b == bd.NEVER else b[1] - b[0]
        score = (round(cov, 9), -round(width, 9))
        if best is None or score > best[0]:
            best = (score, b)
    return best[1] if best else bd.NEVER


def run():
    sig, a15 = signals()
    items = [it for it in bd.load('claims') if it['half'] == HALF and it['source'] in SOURCES]
    # The items every 1.5B signal has (the 0.5B's row is on its own).
    common = [it for it in items if all(f(it['id']) is not None for name, (_, f) in sig.items() if '0.5B' not in name)]
    con_asked = sum(a15.get(('sup', it['id'])) is not None and a15.get(('sup', it['id'])) < 0.5 for it in common)
    rows = []
    for name, (calls, f) in sig.items():
        pool = [it for it in items if f(it['id']) is not None] if '0.5B' in name else common
        by = {s: [(bd.positive('claims', it), f(it['id'])) for it in pool if it['source'] == s] for s in SOURCES}
        srcs = [s for s in SOURCES if by[s]]
        held = []
        for s in srcs:
            band = choose([by[o] for o in srcs if o != s])
            held.append((s, band, figures(by[s], band)))
        if calls is None:
            # ragaliq asks the contradiction question only where P(sup) < 0.5.
            calls = 1 + con_asked / len(common)
        rows.append((name, calls, len(pool), held))
        if name.startswith('one question'):
            base_pool = pool
    return rows, len(common)


def fmt(x):
    return '–' if x is None else f'{x:.3f}'


def main():
    rows, n = run()
    print(f'Claims, Qwen2.5-Coder-1.5B, dev halves of {", ".join(SOURCES)} ({n} claims every 1.5B signal has); '
          'each source held out in turn, the band chosen on the others (rule `sides`).\n')
    print('| signal | calls / claim | claims | median held-out coverage (FaithBench apart) | held-out coverage per source | sides under 0.9 held out (source: side n, acc) |')
    print('| --- | --- | --- | --- | --- | --- |')
    for name, calls, pool, held in rows:
        covs = [f['coverage'] for s, _, f in held if s != 'faithbench']
        per = ', '.join(f'{s} {100 * f["coverage"]:.0f}%' for s, _, f in held)
        bad = []
        for s, _, f in held:
            for side in ('yes', 'no'):
                if f[side + '_acc'] is not None and f[side + '_acc'] < 0.9:
                    bad.append(f'{s}: {side} {f[side + "_n"]}, {fmt(f[side + "_acc"])}')
        print(f'| {name} | {calls:.2f} | {pool} | {100 * statistics.median(covs):.0f}% | {per} | {"; ".join(bad) or "none"} |')


if __name__ == '__main__':
    main()
