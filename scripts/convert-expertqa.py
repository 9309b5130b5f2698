#!/usr/bin/env python3
"""Converts the ExpertQA part of AttributionBench (OSU-NLP-Group/AttributionBench)
into labelled claims in the JSONL form `cargo ragaliq calibrate` reads, split
dev/test by a rule that looks at ids only.

ExpertQA (Malaviya, Lee, Chen, Sieber, Yatskar, Roth, NAACL 2024, "ExpertQA:
Expert-Curated Questions and Attributed Answers", https://arxiv.org/abs/2309.07852):
questions from experts in 32 fields, answered by retrieval-augmented and
generative-search systems with cited web evidence; the experts who asked then
judged each claim (answer sentence) against its evidence. AttributionBench (Li,
Yue, Liao, Sun, 2024, https://arxiv.org/abs/2402.15089) put those judgments in one
form: question, claim, the evidence text, and "attributable" or "not
attributable". ExpertQA's own compiled files are over the size a snapshot holds,
so AttributionBench's copy is used: the ExpertQA rows of
data/dev_all_subset_balanced.jsonl and data/test_all_subset_balanced_sampled500.jsonl.
ExpertQA is under the MIT licence (LICENSE-expertqa.txt), AttributionBench's data
under Apache 2.0; the evidence is excerpts of third-party web pages (see
NOTICE-expertqa.txt beside the output).

A claim stays a claim, with its numeric citation markers ("[3]", "[1, 2]") taken
out; each evidence text is a passage. "attributable" is `supported`, "not
attributable" is `not_supported` (a two-way label: it counts in the supported /
not figures only). Left out: items with no evidence, and fragments that the
sentence splitting made of list headings (claims of fewer than 5 words, such as
"PIC Microcontroller 4."); dropped: those whose evidence runs over 2,000
characters. Taken: 100 of each label, each chosen by the SHA-256 of its text
(question, passages and claim, tab-separated), so the same source gives the same
set.

    scripts/convert-expertqa.py /path/to/AttributionBench tests/public_claims/expertqa

Each half holds `expertqa.jsonl`.
"""
import hashlib, json, os, re, sys

NAME = 'expertqa'
SOURCE = 'ExpertQA'
FILES = ('data/dev_all_subset_balanced.jsonl', 'data/test_all_subset_balanced_sampled500.jsonl')
LABELS = {'attributable': 'supported', 'not attributable': 'not_supported'}
PER_LABEL = 100
MAX_PASSAGE_CHARS = 2000
MIN_CLAIM_WORDS = 5
MARKER = re.compile(r'\s*\[\d+(?:\s*(?:,|-|–|and|, and)\s*\d+)*\]')

def claim(r):
    return MARKER.sub('', r['claim']).strip()

def passages(r):
    out = []
    for p in r['references']:
        p = p.strip()
        if p and p not in out:
            out.append(p)
    return out

def key(r):
    return hashlib.sha256((r['question'].strip() + '\t' + '\t'.join(passages(r)) + '\t' + claim(r)).encode()).hexdigest()

def main(repo, out):
    by_key, dropped_long, no_evidence, fragments = {}, {}, 0, 0
    for path in FILES:
        with open(os.path.join(repo, path), encoding='utf-8') as f:
            for line in f:
                if not line.strip():
                    continue
                r = json.loads(line)
                if r['src_dataset'] != SOURCE:
                    continue
                r['file'] = os.path.basename(path)
                if not passages(r):
                    no_evidence += 1
                elif len(claim(r).split()) < MIN_CLAIM_WORDS:
                    fragments += 1
                elif sum(len(p) for p in passages(r)) > MAX_PASSAGE_CHARS:
                    dropped_long[r['attribution_label']] = dropped_long.get(r['attribution_label'], 0) + 1
                else:
                    by_key.setdefault(key(r), []).append(r)
    # The same question, evidence and claim given two different labels: left out.
    usable = [rs[0] for rs in by_key.values() if len({r['attribution_label'] for r in rs}) == 1]
    conflicting = len(by_key) - len(usable)
    print('left out with no evidence:', no_evidence, '; as fragments:', fragments, '; dropped for length:', dropped_long or 0,
          '; with conflicting labels:', conflicting)
    halves = {'dev': [], 'test': []}
    for label in LABELS:
        for r in sorted((r for r in usable if r['attribution_label'] == label), key=key)[:PER_LABEL]:
            k = key(r)
            item = {
                'id': f'{NAME}-{k[:10]}',
                'area': NAME,
                'passages': passages(r),
                'claim': claim(r),
                'label': LABELS[label],
                'note': f"AttributionBench {SOURCE} {r['id']} (question: {r['question'].strip()}): {label}",
            }
            # The split looks at the id only: its hash's first digit.
            half = 'dev' if int(hashlib.sha256(item['id'].encode()).hexdigest()[0], 16) < 8 else 'test'
            halves[half].append(item)
    for half, items in halves.items():
        items.sort(key=lambda x: x['id'])
        os.makedirs(os.path.join(out, half), exist_ok=True)
        with open(os.path.join(out, half, f'{NAME}.jsonl'), 'w', encoding='utf-8') as f:
            for x in items:
                f.write(json.dumps(x, ensure_ascii=False) + '\n')
        print(half, len(items), {l: sum(x['label'] == l for x in items) for l in LABELS.values()})

if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
