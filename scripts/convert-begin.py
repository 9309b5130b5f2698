#!/usr/bin/env python3
"""Converts part of the BEGIN benchmark (google/BEGIN-dataset) into labelled claims
in the JSONL form `cargo ragaliq calibrate` reads, split dev/test by a rule that
looks at ids only.

BEGIN (Dziri, Rashkin, Linzen, Reitter, 2022, https://arxiv.org/abs/2105.00071):
responses of dialogue models, each with the knowledge snippet it should be grounded
in, labelled by people as "Fully attributable", "Not fully attributable" or
"Generic". Used here: Wizard of Wikipedia (short snippets) and CMU-DoG (long
snippets), both CC BY 4.0 (see LICENSE-BEGIN.md beside the output).

A response becomes a claim; its snippet the one passage. "Fully attributable" is
`supported`; "Not fully attributable" is `not_supported` (people said the snippet
does not back all of it, not whether it contradicts it, so these count only in the
supported / not table); "Generic" responses are left out. Taken: 200 of each label
from WoW (dev and test files), and from CMU-DoG's dev file every attributable
response and as many unattributable ones as make 150, each chosen by the SHA-256
of its text, so the same source gives the same set.

    scripts/convert-begin.py /path/to/BEGIN-dataset tests/public_claims/begin

Each half holds `wow/begin.jsonl` and `cmu/begin.jsonl`, so the long CMU-DoG
snippets can be calibrated alone (`begin/dev/cmu`) or with the rest (`begin/dev`).
"""
import csv, hashlib, json, os, sys

def rows(repo, path):
    with open(os.path.join(repo, path), newline='', encoding='utf-8') as f:
        return list(csv.DictReader(f, delimiter='\t', quoting=csv.QUOTE_NONE))

def key(r):
    return hashlib.sha256((r['model_name'] + '\t' + r['knowledge'] + '\t' + r['response']).encode()).hexdigest()

def pick(rs, label, n):
    chosen = sorted((r for r in rs if r['begin_label'] == label), key=key)
    return chosen[:n]

def main(repo, out):
    wow = rows(repo, 'wow/begin_dev_wow.tsv') + rows(repo, 'wow/begin_test_wow.tsv')
    cmu = rows(repo, 'cmu-dog/begin_dev_cmu.tsv')
    taken = [('wow', r) for r in pick(wow, 'Fully attributable', 200) + pick(wow, 'Not fully attributable', 200)]
    full = pick(cmu, 'Fully attributable', 150)
    taken += [('cmu', r) for r in full + pick(cmu, 'Not fully attributable', 150 - len(full))]
    halves = {'dev': [], 'test': []}
    seen = set()
    for source, r in taken:
        k = key(r)
        if k in seen:
            continue
        seen.add(k)
        item = {
            'id': f'{source}-{k[:10]}',
            'area': source,
            'passages': [r['knowledge'].strip()],
            'claim': r['response'].strip(),
            'label': 'supported' if r['begin_label'] == 'Fully attributable' else 'not_supported',
            'note': f"BEGIN {source} ({r['model_name']}): {r['begin_label']}",
        }
        # The split looks at the id only: its hash's first digit.
        half = 'dev' if int(hashlib.sha256(item['id'].encode()).hexdigest()[0], 16) < 8 else 'test'
        halves[half].append(item)
    for half, items in halves.items():
        items.sort(key=lambda x: x['id'])
        for source in ('wow', 'cmu'):
            part = [x for x in items if x['area'] == source]
            os.makedirs(os.path.join(out, half, source), exist_ok=True)
            with open(os.path.join(out, half, source, 'begin.jsonl'), 'w', encoding='utf-8') as f:
                for x in part:
                    f.write(json.dumps(x, ensure_ascii=False) + '\n')
            print(half, source, len(part), sum(x['label'] == 'supported' for x in part), 'supported')

if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
