#!/usr/bin/env python3
"""A team's own verdicts, simulated on public labelled claims: a threshold
fitted from 30 reviewed verdicts of one source, reported on the rest of it
(issue 37, BENCHMARKS.md "A team's own verdicts").

Every step goes through the product and replays committed recordings: no
model is called, nothing committed is modified. For each source (a test
half with recordings of a model at the shipped claim rule), each way of
choosing the 30 and each seed:

1. the source's labelled files and that model's recordings are copied into
   a scratch folder;
2. 30 of its labelled claims are chosen (seeded), and each one's label is
   written as a person's verdict into the recording exchange that judged it
   with `cargo ragaliq review DIR --key KEY --verdict V --by simulate` (the
   key of what was judged, computed as `ragaliq::judged::key` does: the
   command refuses a key no recording judges, so a wrong one cannot pass
   unseen). `not_supported` (BEGIN's and ExpertQA's two-way label) is given
   as `no_evidence`, what a reviewer who only knows "not attributable"
   would press;
3. `cargo ragaliq calibrate --reviewed DIR --fit --judge team=COPY` fits the
   claim threshold from those 30 into a copy of the judge file;
4. the other items of the source (the rest) are written as labelled files of
   their own, beside copies of the untouched recordings trimmed to what the
   rest asks (`cargo ragaliq calibrate REST --mode replay` writes each as a
   pending `.snap.new`, which is accepted: a recording holding exchanges no
   longer asked is a changed one, and `--fit` refuses while one awaits
   review), and `cargo ragaliq calibrate REST --fit --judge oracle=COPY`
   fits the oracle (the best threshold on the rest itself: an upper bound,
   in hindsight);
5. `cargo ragaliq calibrate REST --judge default=FILE --judge fitted=COPY
   --judge oracle=COPY` reports agreement with people on the rest: the
   shipped default (the committed judge file, unchanged), the threshold
   fitted from 30, and the oracle.

Ways of choosing the 30 (`--modes`):
- `random`: 30 of the source's claims at random;
- `stratified`: 15 people call supported and 15 they do not;
- `against`: 30 at random among the items `cargo ragaliq review` walks by
  default (those the judge decided against at the shipped threshold: what a
  team reviewing failing tests sees).

    cargo build --release -p cargo-ragaliq
    scripts/simulate-reviews.py --bin target/release/cargo-ragaliq \\
        --seeds 20 --out bench/reviews/simulation.jsonl
    scripts/simulate-reviews.py --summary bench/reviews/simulation.jsonl   # the tables again

One JSON line per trial goes to --out; the tables (Markdown) are printed at
the end. 780 trials (7 sources and parts, 2 models, 3 ways, 20 seeds) took
27 min 43 s on a shared 2-core machine. Every command replays (`CI=true`,
`--mode replay`): an exchange missing from a recording is an error, never a
call. Python 3, standard library, plus PyYAML only to read and write the
YAML files of our own set (`tests/labelled_claims`).
"""
import argparse, collections, csv, hashlib, io, json, os, random, re, shutil, statistics
import subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (name, test half, what it is)
SOURCES = [
    ('begin', 'tests/public_claims/begin/test', 'BEGIN (dialogue, knowledge snippets)'),
    ('begin-wow', 'tests/public_claims/begin/test/wow', 'BEGIN, Wizard of Wikipedia part (short snippets)'),
    ('begin-cmu', 'tests/public_claims/begin/test/cmu', 'BEGIN, CMU-DoG part (long snippets)'),
    ('dialfact', 'tests/public_claims/dialfact/test', 'DialFact (dialogue, Wikipedia)'),
    ('expertqa', 'tests/public_claims/expertqa/test', 'ExpertQA (answers to experts, cited web evidence)'),
    ('fm2', 'tests/public_claims/fm2/test', 'FM2 (encyclopedic statements)'),
    ('ours', 'tests/labelled_claims/test', 'our claims (arithmetic, units, partial support)'),
]
# (recording folder, judge file at the shipped claim rule)
MODELS = [('qwen15', 'tests/judges/qwen15.toml'), ('qwen05', 'tests/judges/qwen05.toml')]
MODES = ['random', 'stratified', 'against']
FOUR = ['supported', 'partially_supported', 'no_evidence', 'contradicted']
KEEP = False  # --keep: leave each trial's scratch folder for inspection
EXTENSIONS = ('.jsonl', '.json', '.yaml', '.yml', '.csv')


# ---- the labelled files, read and written back in their own format ----

def labelled_files(half):
    out = []
    for dirpath, dirnames, filenames in os.walk(half):
        dirnames[:] = sorted(d for d in dirnames if d != 'snapshots')
        for f in sorted(filenames):
            if f.endswith(EXTENSIONS):
                out.append(os.path.relpath(os.path.join(dirpath, f), half))
    return out


def yaml_module():
    try:
        import yaml
    except ImportError:
        sys.exit('reading the YAML files of tests/labelled_claims needs PyYAML (pip install pyyaml); '
                 'or leave that source out with --sources')
    return yaml


def read_file(path):
    """The file's top-level entries (a claim or a group of claims sharing
    passages) in order, and how to write a subset of them back."""
    ext = os.path.splitext(path)[1]
    text = open(path, encoding='utf-8').read()
    if ext == '.jsonl':
        lines = [l for l in text.splitlines() if l.strip()]
        return [json.loads(l) for l in lines], ('jsonl', lines)
    if ext == '.json':
        return json.loads(text), ('json', None)
    if ext in ('.yaml', '.yml'):
        return yaml_module().safe_load(text), ('yaml', None)
    rows = list(csv.reader(io.StringIO(text)))
    header = rows[0]
    entries = []
    for row in rows[1:]:
        cells = {h: c.strip() for h, c in zip(header, row)}
        raw = cells.get('passages', '')
        if raw.startswith('['):
            passages = json.loads(raw)
        else:
            passages = [p.strip() for p in raw.split('|') if p.strip()]
        entries.append(dict(cells, passages=passages, _row=row))
    return entries, ('csv', header)


def claims_of(entry):
    """(claim, passages, label) of each claim an entry holds, as ragaliq reads
    them: the claim trimmed, blank passages left out."""
    passages = [p for p in entry.get('passages', []) if p.strip()]
    group = entry.get('claims')
    for c in (group if group is not None else [entry]):
        yield c['id'].strip(), c['claim'].strip(), passages, c['label'].strip()


def write_subset(path, entries, how, keep):
    """Writes the entries' claims for which keep(claim, passages) holds, in the
    file's own format (a group keeps only its kept claims); returns how many."""
    kind, extra = how
    out, n = [], 0
    for i, e in enumerate(entries):
        passages = [p for p in e.get('passages', []) if p.strip()]
        if e.get('claims') is not None:
            kept = [c for c in e['claims'] if keep(c['claim'].strip(), passages)]
            if kept:
                out.append((i, dict(e, claims=kept)))
                n += len(kept)
        elif keep(e['claim'].strip(), passages):
            out.append((i, e))
            n += 1
    with open(path, 'w', encoding='utf-8', newline='') as f:
        if kind == 'jsonl':
            for i, e in out:
                # Claims are one per line here: the line itself, byte for byte.
                f.write((extra[i] if e is entries[i] else json.dumps(e, ensure_ascii=False)) + '\n')
        elif kind == 'json':
            json.dump([e for _, e in out], f, ensure_ascii=False, indent=2)
        elif kind == 'yaml':
            yaml_module().safe_dump([e for _, e in out], f, allow_unicode=True, sort_keys=False, width=1000)
        else:
            w = csv.writer(f, lineterminator='\n')
            w.writerow(extra)
            for _, e in out:
                w.writerow(e['_row'])
    return n


# ---- the key of what was judged (ragaliq::judged::key) ----

def canonical(v):
    """ragaliq's canonical JSON: object keys sorted, no spaces, strings as
    serde_json writes them (UTF-8 kept, control characters escaped)."""
    if isinstance(v, dict):
        return '{' + ','.join(json.dumps(k, ensure_ascii=False) + ':' + canonical(v[k]) for k in sorted(v)) + '}'
    if isinstance(v, list):
        return '[' + ','.join(canonical(x) for x in v) + ']'
    return json.dumps(v, ensure_ascii=False)


def key(claim, passages):
    text = canonical({'judged': 'claim', 'what': {'claim': claim, 'passages': passages}})
    return hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]


def verdict_for(label):
    return label if label in FOUR else 'no_evidence'


def supported(label):
    return label == 'supported'


# ---- running the product ----

class Product:
    def __init__(self, binary):
        self.binary = binary
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(('RAGALIQ_', 'INSTA_'))}
        # Replay only, and never a pending file written beside a copy.
        self.env.update(CI='true', INSTA_UPDATE='no')

    def run(self, args, cwd, stdin=None, check=True, env=None):
        p = subprocess.run([self.binary, 'ragaliq'] + args, cwd=cwd, env=env or self.env, input=stdin,
                           capture_output=True, text=True)
        if check and p.returncode not in (0, 1):
            raise RuntimeError(f'cargo ragaliq {" ".join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}')
        return p


def copy_half(half, files, model, into, folders):
    """Copies the labelled files and `model`'s recordings of `half` into `into`,
    the recordings into each of `folders` (the judge names that read them)."""
    for rel in files:
        d = os.path.join(into, os.path.dirname(rel))
        os.makedirs(d, exist_ok=True)
        shutil.copy(os.path.join(half, rel), os.path.join(into, rel))
        snap = os.path.join(half, os.path.dirname(rel), 'snapshots', model, os.path.basename(rel) + '.snap')
        for folder in folders:
            os.makedirs(os.path.join(d, 'snapshots', folder), exist_ok=True)
            shutil.copy(snap, os.path.join(d, 'snapshots', folder, os.path.basename(rel) + '.snap'))


def trim(product, rest, files, judge_file):
    """Makes the rest's recordings hold what the rest asks and nothing more,
    as a team that shortened its labelled files would: calibrate in replay
    mode writes each as a pending `.snap.new` (a recording holding exchanges
    no longer asked differs from what is asked, and a fit refuses to be
    written while one awaits review), which is then accepted (what `cargo
    insta accept` does), and copied for the fitted and oracle judges."""
    env = dict(product.env, INSTA_UPDATE='new')
    del env['CI']
    product.run(['calibrate', '.', '--mode', 'replay', '--judge',
                 f'default={os.path.join(ROOT, judge_file)}'], cwd=rest, env=env)
    for rel in files:
        snaps = os.path.join(rest, os.path.dirname(rel), 'snapshots')
        snap = os.path.join(snaps, 'default', os.path.basename(rel) + '.snap')
        if os.path.exists(snap + '.new'):
            os.replace(snap + '.new', snap)
        for other in ('fitted', 'oracle'):
            os.makedirs(os.path.join(snaps, other), exist_ok=True)
            shutil.copy(snap, os.path.join(snaps, other))


def walked(product, scratch, half, files, model, judge_file):
    """The keys `cargo ragaliq review` walks by default in `half`'s recordings
    of `model` (items the judge decided against, with no person's verdict),
    every one skipped."""
    d = os.path.join(scratch, 'walk')
    shutil.rmtree(d, ignore_errors=True)
    copy_half(half, files, model, d, [model])
    p = product.run(['review', '.'], cwd=d, stdin='s\n' * 5000)
    keys = re.findall(r'^── .* key ([0-9a-f]{16})$', p.stdout, flags=re.M)
    # The shipped default on the whole half, for reference.
    product.run(['calibrate', '.', '--judge', f'{model}={os.path.join(ROOT, judge_file)}',
                 '--json', os.path.join(scratch, 'whole.json')], cwd=d)
    whole = collapsed(json.load(open(os.path.join(scratch, 'whole.json'))), model)
    return keys, whole


def collapsed(report, name):
    for j in report['judges']:
        if j['name'] == name:
            four = j['verdicts']['kappa'] if report.get('labels') and 'not_supported' not in report['labels'] else None
            return {'kappa': j['collapsed']['kappa'], 'four': four, 'judged': j['judged'],
                    'undecided': j['undecided'], 'not_judged': len(j['not_judged'])}
    raise KeyError(name)


def trial(product, scratch, source, half, files, items, model, judge_file, mode, seed, size, walk_keys):
    t0 = time.time()
    d = os.path.join(scratch, f'{source}-{model}-{mode}-{seed}')
    shutil.rmtree(d, ignore_errors=True)
    rng = random.Random(f'{source}/{mode}/{seed}')
    if mode == 'random':
        chosen = rng.sample(items, size)
    elif mode == 'stratified':
        yes = [i for i in items if supported(i['label'])]
        no = [i for i in items if not supported(i['label'])]
        chosen = rng.sample(yes, size // 2) + rng.sample(no, size - size // 2)
    else:
        walk = set(walk_keys)
        pool = [i for i in items if i['key'] in walk]
        chosen = rng.sample(pool, min(size, len(pool)))
    chosen_keys = {i['key'] for i in chosen}

    # 1-2. The team's recordings, with the 30 verdicts given through review.
    team = os.path.join(d, 'team')
    copy_half(half, files, model, team, [model])
    for i in chosen:
        product.run(['review', '.', '--key', i['key'], '--verdict', verdict_for(i['label']),
                     '--by', 'simulate'], cwd=team)
    # 3. The fit from them.
    team_toml = os.path.join(d, 'team.toml')
    shutil.copy(os.path.join(ROOT, judge_file), team_toml)
    p = product.run(['calibrate', '--reviewed', '.', '--fit', '--judge', f'team={team_toml}',
                     '--json', os.path.join(d, 'reviewed.json')], cwd=team)
    reports = json.load(open(os.path.join(d, 'reviewed.json')))
    claims = [r for r in reports if r['kind'] == 'claim']
    fit = claims[0]['judges'][0]['fit'] if claims else None
    fitted_lines = [l.strip().replace(d + os.sep, '') for l in p.stdout.splitlines()
                    if l.strip().startswith(('fitted', 'TOO FEW', 'person\'s verdicts:'))]
    written = any(l.startswith('fitted: wrote') for l in fitted_lines)
    verdicts_read = int(re.search(r"person's verdicts: (\d+)", p.stdout).group(1))

    # 4-5. The rest: its own labelled files, the untouched recordings.
    rest = os.path.join(d, 'rest')
    copy_half(half, files, model, rest, ['default'])
    n_rest = 0
    for rel in files:
        entries, how = read_file(os.path.join(half, rel))
        n_rest += write_subset(os.path.join(rest, rel), entries, how,
                               lambda c, ps: key(c, ps) not in chosen_keys)
    trim(product, rest, files, judge_file)
    oracle_toml = os.path.join(d, 'oracle.toml')
    shutil.copy(os.path.join(ROOT, judge_file), oracle_toml)
    po = product.run(['calibrate', 'rest', '--fit', '--fit-anyway', '--judge', f'oracle={oracle_toml}',
                      '--json', os.path.join(d, 'oracle.json')], cwd=d)
    oracle_fit = json.load(open(os.path.join(d, 'oracle.json')))['judges'][0]['fit']
    pr = product.run(['calibrate', 'rest', '--judge', f'default={os.path.join(ROOT, judge_file)}',
                      '--judge', f'fitted={team_toml}', '--judge', f'oracle={oracle_toml}',
                      '--json', os.path.join(d, 'rest.json')], cwd=d)
    report = json.load(open(os.path.join(d, 'rest.json')))
    labels = collections.Counter(supported(i['label']) for i in chosen)
    row = {
        'source': source, 'model': model, 'mode': mode, 'seed': seed,
        'reviewed': len(chosen), 'chosen': sorted(i['id'] for i in chosen), 'reviewed_supported': labels[True], 'reviewed_not': labels[False],
        'verdicts_read': verdicts_read,
        'fit': None if fit is None else {
            'threshold': fit['threshold'], 'current': fit['current'], 'kappa': fit['kappa'], 'items': fit['items'],
            'kappa_at_current': fit['kappa_at_current'], 'too_few': fit['too_few'],
            'halves': fit['halves'],
            'contradiction_ratio': (fit.get('contradiction') or {}).get('ratio'),
        },
        'unfitted': claims[0]['judges'][0]['unfitted'] if claims else 'no claims report',
        'written': written, 'said': fitted_lines,
        'rest': n_rest, 'rest_claims': report['claims'],
        'default': collapsed(report, 'default'), 'fitted': collapsed(report, 'fitted'),
        'oracle': collapsed(report, 'oracle'),
        'oracle_threshold': oracle_fit['threshold'] if oracle_fit else None,
        'seconds': round(time.time() - t0, 2),
    }
    assert report['claims'] == n_rest, (report['claims'], n_rest)
    assert verdicts_read == len(chosen), (verdicts_read, len(chosen))
    if not KEEP:
        shutil.rmtree(d, ignore_errors=True)
    return row


# ---- the tables ----

def fmt(x, places=3):
    return '—' if x is None else f'{x:.{places}f}'


def kept(r):
    """Whether a team that reads the fit's report keeps the current threshold:
    the report says TOO FEW, or the current threshold lies inside the middle
    90% of the thresholds fitted on random halves (the verdicts do not tell
    the two apart), or nothing was written."""
    f = r['fit']
    if not r['written'] or not f:
        return True
    h = f['halves']
    return f['too_few'] is not None or (h is not None and h['low'] <= f['current'] <= h['high'])


def summary(rows):
    out = []
    groups = collections.OrderedDict()
    for r in rows:
        groups.setdefault((r['model'], r['mode'], r['source']), []).append(r)
    for model in [m for m, _ in MODELS]:
        for mode in MODES:
            keys = [k for k in groups if k[0] == model and k[1] == mode]
            if not keys:
                continue
            g0 = groups[keys[0]]
            out.append(f'\n{model}, 30 verdicts chosen `{mode}`, {len(g0)} seeds; kappa supported / not on the rest:\n')
            out.append('| source: items (rest) | default, whole half | default | **fitted from 30**: mean (min to max) | fitted ≥ default | change | thresholds written | TOO FEW said | current inside halves\' 90% | reading the report: mean (≥ default) | oracle (its thresholds) |')
            out.append('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
            for k in keys:
                g = groups[k]
                d = [r['default']['kappa'] for r in g]
                f = [r['fitted']['kappa'] for r in g]
                o = [r['oracle']['kappa'] for r in g]
                read = [r['default']['kappa'] if kept(r) else r['fitted']['kappa'] for r in g]
                th = [r['fit']['threshold'] for r in g if r['written'] and r['fit']]
                ge = sum(1 for a, b in zip(f, d) if a >= b - 1e-9)
                ge_read = sum(1 for a, b in zip(read, d) if a >= b - 1e-9)
                too = sum(1 for r in g if r['fit'] and r['fit']['too_few'])
                inside = sum(1 for r in g if r['fit'] and r['fit']['halves']
                             and r['fit']['halves']['low'] <= r['fit']['current'] <= r['fit']['halves']['high'])
                none = sum(1 for r in g if not r['written'])
                ot = [r['oracle_threshold'] for r in g if r['oracle_threshold'] is not None]
                rest = sorted({r['rest'] for r in g})
                out.append(
                    f"| {k[2]}: {g[0]['items']} ({'/'.join(map(str, rest)) if len(rest) < 3 else f'{rest[0]}-{rest[-1]}'}) "
                    f"| {g[0]['whole_default']['kappa']:.3f} "
                    f"| {statistics.mean(d):.3f} "
                    f"| **{statistics.mean(f):.3f}** ({min(f):.3f} to {max(f):.3f}) "
                    f"| {ge} of {len(g)} "
                    f"| {statistics.mean(f) - statistics.mean(d):+.3f} "
                    f"| {(f'{min(th):g} to {max(th):g}') if th else '—'}{f' ({none} none)' if none else ''} "
                    f"| {too} "
                    f"| {inside} "
                    f"| {statistics.mean(read):.3f} ({ge_read}) "
                    f"| {statistics.mean(o):.3f} ({min(ot):g} to {max(ot):g}) |")
    return '\n'.join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--bin', default=os.path.join(ROOT, 'target/release/cargo-ragaliq'),
                    help='the cargo-ragaliq binary (default: target/release/cargo-ragaliq)')
    ap.add_argument('--seeds', type=int, default=20)
    ap.add_argument('--size', type=int, default=30, help='verdicts reviewed per trial')
    ap.add_argument('--modes', default=','.join(MODES))
    ap.add_argument('--sources', default=','.join(s for s, _, _ in SOURCES))
    ap.add_argument('--models', default=','.join(m for m, _ in MODELS))
    ap.add_argument('--scratch', default=None, help='scratch folder (default: a fresh one under $TMPDIR)')
    ap.add_argument('--out', default=os.path.join(ROOT, 'bench/reviews/simulation.jsonl'))
    ap.add_argument('--summary', metavar='JSONL', help='print the tables of an earlier run and exit')
    ap.add_argument('--keep', action='store_true', help="keep each trial's scratch folder")
    a = ap.parse_args()
    global KEEP
    KEEP = a.keep
    if a.summary:
        print(summary([json.loads(l) for l in open(a.summary)]))
        return
    import tempfile
    scratch = a.scratch or tempfile.mkdtemp(prefix='ragaliq-simulate-')
    os.makedirs(scratch, exist_ok=True)
    product = Product(os.path.abspath(a.bin))
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    rows, started = [], time.time()
    with open(a.out, 'w', encoding='utf-8') as out:
        for source, half_rel, _ in SOURCES:
            if source not in a.sources.split(','):
                continue
            half = os.path.join(ROOT, half_rel)
            files = labelled_files(half)
            items = []
            for rel in files:
                entries, _ = read_file(os.path.join(half, rel))
                for e in entries:
                    for id_, c, ps, label in claims_of(e):
                        items.append({'id': id_, 'file': rel, 'claim': c, 'passages': ps, 'label': label,
                                      'key': key(c, ps)})
            dup = len(items) - len({i['key'] for i in items})
            if dup:
                sys.exit(f'{half_rel}: {dup} claims share their claim and passages with another: one key, one verdict')
            for model, judge_file in MODELS:
                if model not in a.models.split(','):
                    continue
                missing = [rel for rel in files if not os.path.exists(os.path.join(
                    half, os.path.dirname(rel), 'snapshots', model, os.path.basename(rel) + '.snap'))]
                if missing:
                    print(f'{source} / {model}: no recording of {", ".join(missing)}: left out', file=sys.stderr)
                    continue
                walk_keys, whole = walked(product, scratch, half, files, model, judge_file)
                for mode in a.modes.split(','):
                    for seed in range(a.seeds):
                        row = trial(product, scratch, source, half, files, items, model, judge_file,
                                    mode, seed, a.size, walk_keys)
                        row['items'] = len(items)
                        row['walked'] = len(walk_keys)
                        row['whole_default'] = whole
                        out.write(json.dumps(row, ensure_ascii=False) + '\n')
                        out.flush()
                        rows.append(row)
                    g = [r for r in rows if (r['source'], r['model'], r['mode']) == (source, model, mode)]
                    print(f'{source} / {model} / {mode}: default {statistics.mean(r["default"]["kappa"] for r in g):.3f}, '
                          f'fitted {statistics.mean(r["fitted"]["kappa"] for r in g):.3f} over {len(g)} seeds '
                          f'({time.time() - started:.0f} s)', file=sys.stderr)
    print(summary(rows))
    print(f'\n{len(rows)} trials in {time.time() - started:.0f} s', file=sys.stderr)


if __name__ == '__main__':
    main()
