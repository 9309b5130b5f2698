#!/usr/bin/env python3
"""A team's first verdicts fitting the band (issue 47 item 3), simulated on
the 1.5B's cached readings of public labelled claims: no model is called.

For each source, its items with a reading (dev and test halves together)
arrive in a random order as a team's reviewed verdicts; after N of them
(40, 80, 120, 200) the band is fitted on those N and read on the rest of the
source: the share of the rest it decides, and each side's decided accuracy
there. Many orders (--orders, 200 by default) per source and size.

The fits compared:

- `before`: the fit before issue 47: fixed-sequence binomial tests from
  the extremes inwards, every distinct reading a cut, cuts deciding fewer
  than 36 items untested, delta / 2 a side; guarantee: decided agreement
  >= 0.9 on each certified side, both together with probability 0.95.
- `shipped`: ragaliq's `calibrate::fit_band_from` now (a port, checked
  against it by `tests/fixtures/band_fit.json`, which --fixture writes and
  a unit test of the crate reads): the same tests and guarantee, each
  side's sequence starting at the shipped band's cut ([0.075, 0.9)) and
  going inwards; a side whose starting cut decides fewer than 36 of the
  verdicts keeps it, not certified. `certified sides` counts what the
  guarantee covers; `with the kept starting cuts` adds what the kept cuts
  decide (no guarantee covers it).
- `spaced`: the same tests on fewer, wider-spaced cuts (each tested cut
  decides at least 1.25 times as many items as the last one tested: chosen
  from the readings alone, so the sequence is fixed before the labels).
  Same guarantee.
- `each side at delta`: each side tested at delta, not delta / 2: each side
  holds with probability 0.95 on its own, both together only 0.90. A
  weaker guarantee, for comparison.
- `pooled`: one fixed sequence of (low, high) pairs widening from both
  extremes by quantile, one test of both sides' decided items together at
  delta: decided agreement >= 0.9 over both sides together, not on each.
  A weaker guarantee, for comparison.

    scripts/simulate-fit.py                       # the table of bench/fit/README.md
    scripts/simulate-fit.py --fixture tests/fixtures/band_fit.json
"""
import argparse, importlib.util, json, math, os, random, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ALPHA, DELTA = 0.1, 0.05
SIZES = (40, 80, 120, 200)
SOURCES = ('begin', 'dialfact', 'ours', 'fm2', 'expertqa', 'faithbench')
THRESHOLD = 0.33
SPACING = 1.25


def binomial_cdf(k, n, p):
    """P(X <= k) for X ~ Binomial(n, p)."""
    if n == 0:
        return 1.0
    lp, lq = math.log(p), math.log(1 - p)
    term = n * lq
    logs = [term]
    for i in range(min(k, n)):
        term += math.log((n - i) / (i + 1)) + lp - lq
        logs.append(term)
    top = max(logs)
    return min(1.0, max(0.0, math.exp(top + math.log(sum(math.exp(x - top) for x in logs)))))


def fewest(alpha, delta):
    return math.ceil(math.log(delta / 2) / math.log(1 - alpha))


def side(cuts, need, candidates, count, alpha, level, spacing):
    """The fixed sequence over `cuts` (most conservative first): the last
    certified cut, the items it decides, its errors (None: none certified)."""
    if candidates < need:
        return None, 0, 0
    best = (None, 0, 0)
    last = 0
    for cut in cuts:
        n, errors = count(cut)
        if n < need or (spacing and last and n < spacing * last):
            continue
        last = n
        if binomial_cdf(errors, n, alpha) > level:
            break
        best = (cut, n, errors)
    return best


def fit(scored, threshold=THRESHOLD, alpha=ALPHA, delta=DELTA, spacing=None, start=None):
    """(no cut, yes cut, too few?) of `scored` [(label, p)]: decide no at
    p < no cut, yes at p >= yes cut; None: that side decides nothing.
    `start` (low, high; either None) is the starting band: each side's
    sequence starts at its cut, and a side whose starting cut decides too
    few verdicts keeps it (too few: not certified)."""
    need = fewest(alpha, delta)
    each = delta / 2
    lo0, hi0 = start if start else (None, None)
    lo0 = None if lo0 is None else min(lo0, threshold)
    hi0 = None if hi0 is None else max(hi0, threshold)
    count_yes = lambda h: (sum(p >= h for _, p in scored), sum(p >= h and not l for l, p in scored))
    count_no = lambda c: (sum(p < c for _, p in scored), sum(p < c and l for l, p in scored))
    ups = sorted({p for _, p in scored if p >= threshold}, reverse=True)
    if hi0 is not None:
        ups = [hi0] + [p for p in ups if p < hi0]
    cand_yes = count_yes(hi0)[0] if hi0 is not None else sum(p >= threshold for _, p in scored)
    yes = side(ups, need, cand_yes, count_yes, alpha, each, spacing)
    downs = sorted({p for _, p in scored if p < threshold})
    cuts = [(p + downs[i + 1]) / 2 if i + 1 < len(downs) else threshold for i, p in enumerate(downs)]
    if lo0 is not None:
        cuts = [lo0] + [c for c in cuts if c > lo0]
    cand_no = count_no(lo0)[0] if lo0 is not None else sum(p < threshold for _, p in scored)
    no = side(cuts, need, cand_no, count_no, alpha, each, spacing)
    short_yes, short_no = cand_yes < need, cand_no < need
    too_few = short_yes and short_no
    # A short side keeps the starting band's cut (not certified).
    return (lo0 if short_no else no[0]), (hi0 if short_yes else yes[0]), too_few


def short(scored, need_delta=DELTA, threshold=THRESHOLD):
    """Which sides have fewer verdicts than a certificate needs: (no, yes)."""
    need = fewest(ALPHA, need_delta)
    return (sum(p < threshold for _, p in scored) < need, sum(p >= threshold for _, p in scored) < need)


SHIPPED = (0.075, 0.9)


def pooled(scored, alpha=ALPHA, delta=DELTA, t=THRESHOLD):
    """(no cut, yes cut) of one fixed sequence over pairs widening from both
    extremes by quantile, both sides' decided items tested together."""
    ps = sorted(p for _, p in scored)
    n = len(ps)
    need = math.ceil(math.log(delta) / math.log(1 - alpha))
    best, last = (None, None), 0
    for k in range(1, n):
        lo, hi = min(ps[k - 1] + 1e-9, t), max(ps[n - k], t)
        dec = [(l, p) for l, p in scored if p < lo or p >= hi]
        m = len(dec)
        if m < need or (last and m < SPACING * last):
            continue
        last = m
        if binomial_cdf(sum((p >= hi) != l for l, p in dec), m, alpha) > delta:
            break
        best = (lo, hi)
        if lo >= t and hi <= t:
            break
    return best


def bd():
    spec = importlib.util.spec_from_file_location('band_designs', os.path.join(HERE, 'band-designs.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def items_of(source):
    b = bd()
    out = []
    for h in ('dev', 'test'):
        c = b.cells('claims', 'qwen15')[(source, h)]
        out += [(y, p) for y, p in zip(c.people, c.p) if p is not None]
    return out


def read(rest, no, yes):
    """Coverage on the rest, and each side's decided count and errors."""
    dy = [(l, p) for l, p in rest if yes is not None and p >= yes]
    dn = [(l, p) for l, p in rest if no is not None and p < no]
    return {'coverage': (len(dy) + len(dn)) / len(rest) if rest else 0.0,
            'yes_n': len(dy), 'yes_wrong': sum(not l for l, _ in dy),
            'no_n': len(dn), 'no_wrong': sum(l for l, _ in dn)}


FITS = {
    'before (from the extremes)': lambda sc: fit(sc)[:2],
    'shipped (from the shipped band), certified sides': None,
    'shipped, with the kept starting cuts': None,
    'spaced': lambda sc: fit(sc, spacing=SPACING)[:2],
    'each side at delta': lambda sc: fit(sc, delta=2 * DELTA)[:2],
    'pooled': pooled,
}


def shipped_kept(sc):
    return fit(sc, start=SHIPPED)[:2]


def shipped_certified(sc):
    """The shipped fit from the shipped band, its certified sides only."""
    no, yes, _ = fit(sc, start=SHIPPED)
    short_no, short_yes = short_of(sc, SHIPPED)
    return (None if short_no else no), (None if short_yes else yes)


def short_of(sc, start, threshold=THRESHOLD):
    need = fewest(ALPHA, DELTA)
    lo, hi = min(start[0], threshold), max(start[1], threshold)
    return sum(p < lo for _, p in sc) < need, sum(p >= hi for _, p in sc) < need


FITS['shipped (from the shipped band), certified sides'] = shipped_certified
FITS['shipped, with the kept starting cuts'] = shipped_kept


def simulate(orders):
    rows = []
    for s in SOURCES:
        its = items_of(s)
        for n in SIZES:
            if n >= len(its) - 20:
                continue
            for name, fitf in FITS.items():
                agg = {'coverage': [], 'yes_n': 0, 'yes_wrong': 0, 'no_n': 0, 'no_wrong': 0,
                       'yes_bad': 0, 'no_bad': 0, 'yes_fitted': 0, 'no_fitted': 0}
                for seed in range(orders):
                    order = its[:]
                    random.Random(f'{s}-{seed}').shuffle(order)
                    fitted, rest = order[:n], order[n:]
                    no, yes = fitf(fitted)
                    r = read(rest, no, yes)
                    agg['coverage'].append(r['coverage'])
                    for k in ('yes', 'no'):
                        agg[k + '_n'] += r[k + '_n']
                        agg[k + '_wrong'] += r[k + '_wrong']
                        agg[k + '_fitted'] += (yes if k == 'yes' else no) is not None
                        # An order whose decided side on the rest falls under 1 - alpha.
                        if r[k + '_n'] and r[k + '_wrong'] / r[k + '_n'] > ALPHA:
                            agg[k + '_bad'] += 1
                rows.append({'source': s, 'items': len(its), 'verdicts': n, 'fit': name, 'orders': orders,
                             'coverage': sum(agg['coverage']) / orders,
                             'yes_acc': 1 - agg['yes_wrong'] / agg['yes_n'] if agg['yes_n'] else None,
                             'no_acc': 1 - agg['no_wrong'] / agg['no_n'] if agg['no_n'] else None,
                             'yes_certified': agg['yes_fitted'] / orders, 'no_certified': agg['no_fitted'] / orders,
                             'yes_under': agg['yes_bad'] / orders, 'no_under': agg['no_bad'] / orders})
    return rows


def fmt(x, nd=3):
    return '–' if x is None else f'{x:.{nd}f}'


def table(rows):
    out = ['| source (items) | verdicts | fit | coverage of the rest | decided yes: accuracy | decided no: accuracy | orders with a cut on yes / no (certified or kept) | orders with a side under 0.9 on the rest: yes / no |',
           '| --- | --- | --- | --- | --- | --- | --- | --- |']
    for r in rows:
        out.append(f'| {r["source"]} ({r["items"]}) | {r["verdicts"]} | {r["fit"]} | {100 * r["coverage"]:.1f}% | {fmt(r["yes_acc"])} | {fmt(r["no_acc"])} | '
                   f'{100 * r["yes_certified"]:.0f}% / {100 * r["no_certified"]:.0f}% | {100 * r["yes_under"]:.1f}% / {100 * r["no_under"]:.1f}% |')
    return '\n'.join(out)


def curves(rows):
    """Coverage of the rest after 40, 80, 120, 200 verdicts, one row per
    source and fit: `coverage (yes accuracy / no accuracy)`."""
    keyed = {(r['source'], r['fit'], r['verdicts']): r for r in rows}
    out = ['| source | fit | ' + ' | '.join(f'after {n}' for n in SIZES) + ' |',
           '| --- | --- | ' + ' | '.join('---' for _ in SIZES) + ' |']
    for s in SOURCES:
        for name in FITS:
            cells = []
            for n in SIZES:
                r = keyed.get((s, name, n))
                cells.append('–' if r is None else
                             f'{100 * r["coverage"]:.1f}% ({fmt(r["yes_acc"], 2)} / {fmt(r["no_acc"], 2)})')
            out.append(f'| {s} | {name} | ' + ' | '.join(cells) + ' |')
    return '\n'.join(out)


def fixture(path):
    """Cases for ragaliq's own fit to reproduce (ragaliq/tests or a unit test)."""
    cases = []
    for s in ('begin', 'ours', 'fm2', 'dialfact'):
        its = items_of(s)
        for seed in range(2):
            order = its[:]
            random.Random(f'fixture-{s}-{seed}').shuffle(order)
            for n in (40, 120, 200, len(order)):
                sub = order[:n]
                start = SHIPPED if seed % 2 else None
                cases.append({'source': s, 'scored': [[l, round(p, 6)] for l, p in sub], 'threshold': THRESHOLD,
                              'start': start})
    # Recompute on the rounded readings (what the fixture holds).
    for c in cases:
        no, yes, too_few = fit([(l, p) for l, p in c['scored']], start=c['start'])
        c['no'], c['yes'], c['too_few'] = no, yes, too_few
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(cases, f)
        f.write('\n')
    print(f'{len(cases)} cases written to {path}')


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--orders', type=int, default=200)
    p.add_argument('--fixture')
    a = p.parse_args()
    if a.fixture:
        fixture(a.fixture)
        return
    rows = simulate(a.orders)
    print('## The curves: coverage of the rest (decided yes accuracy / decided no accuracy there)\n')
    print(curves(rows))
    print('\n## Every figure\n')
    print(table(rows))


if __name__ == '__main__':
    main()
