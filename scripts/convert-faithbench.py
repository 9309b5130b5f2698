#!/usr/bin/env python3
"""Converts part of FaithBench (vectara/FaithBench) into labelled claims in the JSONL
form `cargo ragaliq calibrate` reads, split dev/test by a rule that looks at ids only.

FaithBench (Bao, Li, Qu, Luo, Wan, Tang, Fan, Tamber, Kazi, Sourabh, Qi, Tu, Xu,
Gonzales, Mendelevitch, Ahmad, NAACL 2025, "FaithBench: A Diverse Hallucination
Benchmark for Summarization by Modern LLMs",
https://aclanthology.org/2025.naacl-short.38/): summaries written by ten modern
LLMs of short source texts (news, Wikipedia-style snippets and others), where
human annotators marked each span they found inconsistent with the source as
"Unwanted" (intrinsic or extrinsic), "Benign" (not in the source but harmless) or
"Questionable". The release lists the marks only, not who read a summary and
marked nothing. The summaries were picked for annotation because
hallucination detectors disagreed on them, so they are harder than usual. The data
are under CC BY-NC-SA 4.0 (LICENSE-faithbench.txt beside the output). Used here:
data_for_release/batch_*.json.

A summary becomes a claim (it may hold a few sentences); its source the one
passage. A summary in which no one marked anything is `supported`; one in which
anyone marked a span "Unwanted" is `not_supported` (a two-way label: it counts in
the supported / not figures only); summaries marked only "Benign" or
"Questionable" are left out, as neither label says. Sources over 2,000 characters
are dropped. Taken: 100 of each label, each chosen by the SHA-256 of its text
(source, tab, summary), so the same source gives the same set. The detectors'
scores in the metadata are not looked at.

    scripts/convert-faithbench.py /path/to/FaithBench tests/public_claims/faithbench

Each half holds `faithbench.jsonl`.
"""
import glob, hashlib, json, os, re, sys

NAME = 'faithbench'
PER_LABEL = 100
MAX_PASSAGE_CHARS = 2000

def key(s):
    return hashlib.sha256((s['source'].strip() + '\t' + s['summary'].strip()).encode()).hexdigest()

def marks(s):
    return sorted({l for a in s['annotations'] for l in a['label']})

def label(s):
    if not s['annotations']:
        return 'supported'
    if any(l.startswith('Unwanted') for l in marks(s)):
        return 'not_supported'
    return None

def main(repo, out):
    paths = sorted(glob.glob(os.path.join(repo, 'data_for_release', 'batch_*.json')),
                   key=lambda p: int(re.search(r'batch_(\d+)\.json$', p).group(1)))
    by_key, dropped_long, neither = {}, {}, 0
    for path in paths:
        batch = re.search(r'batch_(\d+)\.json$', path).group(1)
        with open(path, encoding='utf-8') as f:
            for s in json.load(f)['samples']:
                s['batch'] = batch
                lab = label(s)
                if lab is None:
                    neither += 1
                elif len(s['source'].strip()) > MAX_PASSAGE_CHARS:
                    dropped_long[lab] = dropped_long.get(lab, 0) + 1
                else:
                    by_key.setdefault(key(s), []).append(s)
    # The same source and summary labelled two ways: left out.
    usable = [ss[0] for ss in by_key.values() if len({label(s) for s in ss}) == 1]
    conflicting = len(by_key) - len(usable)
    print('left out as only Benign/Questionable:', neither, '; dropped for length:', dropped_long or 0,
          '; with conflicting labels:', conflicting)
    halves = {'dev': [], 'test': []}
    for lab in ('supported', 'not_supported'):
        for s in sorted((s for s in usable if label(s) == lab), key=key)[:PER_LABEL]:
            k = key(s)
            people = len({a['annotator_id'] for a in s['annotations']})
            said = ', '.join(marks(s)) if s['annotations'] else 'nothing marked'
            item = {
                'id': f'{NAME}-{k[:10]}',
                'area': NAME,
                'passages': [s['source'].strip()],
                'claim': s['summary'].strip(),
                'label': lab,
                'note': f"FaithBench batch {s['batch']} #{s['sample_id']} ({s['metadata']['summarizer']}): {said}"
                        + (f' (by {people} annotators)' if people else ''),
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
        print(half, len(items), {l: sum(x['label'] == l for x in items) for l in ('supported', 'not_supported')})

if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
