#!/usr/bin/env python3
"""Converts part of HealthVer (sarrouti/HealthVer) into labelled claims in the JSONL
form `cargo ragaliq calibrate` reads, split dev/test by a rule that looks at ids only.

HealthVer (Sarrouti, Ben Abacha, Mrabet, Demner-Fushman, Findings of EMNLP 2021,
"Evidence-based Fact-Checking of Health-related Claims",
https://aclanthology.org/2021.findings-emnlp.297/): real-world health claims about
COVID-19 (taken from search-engine snippets answering people's questions), each
paired with an evidence passage from a scientific abstract (CORD-19), and the
relation between the two annotated by people as "Supports", "Refutes" or
"Neutral". The repository carries no licence file; see NOTICE-healthver.txt beside
the output. Used here: data/healthver_dev.csv and data/healthver_test.csv (the
train file is over the size a snapshot holds and is not needed).

The evidence passage becomes the one passage, the claim the claim. "Supports" is
`supported`, "Refutes" is `contradicted`, "Neutral" is `no_evidence` (a three-way
label: the passage says nothing either way about the claim). Pairs over 2,000
characters of passage would be dropped (none are). A pair given two different
labels would be left out (none is). Taken: 70 of each label, each chosen by the
SHA-256 of its text (evidence, tab, claim), so the same source gives the same set.

    scripts/convert-healthver.py /path/to/HealthVer tests/public_claims/healthver

Each half holds `healthver.jsonl`.
"""
import csv, hashlib, json, os, sys

NAME = 'healthver'
FILES = ('data/healthver_dev.csv', 'data/healthver_test.csv')
LABELS = {'Supports': 'supported', 'Refutes': 'contradicted', 'Neutral': 'no_evidence'}
PER_LABEL = 70
MAX_PASSAGE_CHARS = 2000

def rows(repo, path):
    with open(os.path.join(repo, path), newline='', encoding='utf-8') as f:
        return list(csv.DictReader(f))

def key(r):
    return hashlib.sha256((r['evidence'].strip() + '\t' + r['claim'].strip()).encode()).hexdigest()

def main(repo, out):
    by_key, dropped_long = {}, {}
    for path in FILES:
        split = path.split('_')[-1].split('.')[0]
        for r in rows(repo, path):
            r['split'] = split
            if len(r['evidence'].strip()) > MAX_PASSAGE_CHARS:
                dropped_long[r['label']] = dropped_long.get(r['label'], 0) + 1
                continue
            by_key.setdefault(key(r), []).append(r)
    # The same evidence and claim given two different labels: left out.
    usable = [rs[0] for rs in by_key.values() if len({r['label'] for r in rs}) == 1]
    conflicting = sum(1 for rs in by_key.values() if len({r['label'] for r in rs}) > 1)
    halves = {'dev': [], 'test': []}
    for label in LABELS:
        chosen = sorted((r for r in usable if r['label'] == label), key=key)[:PER_LABEL]
        for r in chosen:
            k = key(r)
            item = {
                'id': f'{NAME}-{k[:10]}',
                'area': NAME,
                'passages': [r['evidence'].strip()],
                'claim': r['claim'].strip(),
                'label': LABELS[label],
                'note': f"HealthVer {r['split']} #{r['id']} (question: {r['question'].strip()}): {label}",
            }
            # The split looks at the id only: its hash's first digit.
            half = 'dev' if int(hashlib.sha256(item['id'].encode()).hexdigest()[0], 16) < 8 else 'test'
            halves[half].append(item)
    print('dropped for length:', dropped_long or 0, '; pairs with conflicting labels:', conflicting)
    for half, items in halves.items():
        items.sort(key=lambda x: x['id'])
        os.makedirs(os.path.join(out, half), exist_ok=True)
        with open(os.path.join(out, half, f'{NAME}.jsonl'), 'w', encoding='utf-8') as f:
            for x in items:
                f.write(json.dumps(x, ensure_ascii=False) + '\n')
        print(half, len(items), {l: sum(x['label'] == l for x in items) for l in LABELS.values()})

if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
