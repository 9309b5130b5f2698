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

Each sentence of a summary becomes a claim (ragaliq checks claims, not whole
answers); its source the one passage. The annotators marked spans by their
character offsets, so a sentence's label is read from the marks inside it: a
sentence that holds (part of) a span someone marked "Unwanted" is
`not_supported` (a two-way label: it counts in the supported / not figures
only); a sentence of an annotated summary with no mark in it is `supported`
(the annotators read the summary and marked elsewhere, or nothing); a sentence
whose only marks are "Benign" or "Questionable" is left out, as neither label
says. Sentences of fewer than four words, and sources over 2,000 characters,
are dropped. Taken: 100 of each label, each chosen by the SHA-256 of its text
(source, tab, sentence), at most two from one summary, so the same source
gives the same set. The detectors' scores in the metadata are not looked at.

    scripts/convert-faithbench.py /path/to/FaithBench tests/public_claims/faithbench

Each half holds `faithbench.jsonl`.
"""
import glob, hashlib, json, os, re, sys

NAME = 'faithbench'
PER_LABEL = 100
MAX_PASSAGE_CHARS = 2000

def key(s):
    return hashlib.sha256((s['source'].strip() + '\t' + s['summary'].strip()).encode()).hexdigest()


def sentence_key(source, sentence):
    return hashlib.sha256((source.strip() + '\t' + sentence).encode()).hexdigest()


def sentences(text):
    """(start, end) of each sentence: ends at . ! or ? followed by white space
    and a capital, a digit or a quote, or at the end of the text."""
    out, start = [], 0
    for m in re.finditer(r'[.!?]["\')]?(?=\s+["\'(]?[A-Z0-9])', text):
        out.append((start, m.end()))
        start = m.end()
    out.append((start, len(text)))
    spans = []
    for a, b in out:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            spans.append((a, b))
    return spans


def sentence_label(s, a, b):
    inside = [x for x in s['annotations']
              if x.get('summary_start') is not None and x['summary_start'] < b and x['summary_end'] > a]
    if any(any(l.startswith('Unwanted') for l in x['label']) for x in inside):
        return 'not_supported'
    if inside:
        return None
    return 'supported'

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
    claims, short, unclear = [], 0, 0
    for s in usable:
        if any(x.get('summary_start') is None for x in s['annotations'] if any(l.startswith('Unwanted') for l in x['label'])):
            continue  # an Unwanted mark with no place: which sentence is unknown
        for a, b in sentences(s['summary']):
            text = s['summary'][a:b]
            if len(text.split()) < 4:
                short += 1
                continue
            lab = sentence_label(s, a, b)
            if lab is None:
                unclear += 1
                continue
            claims.append((sentence_key(s['source'], text), lab, text, s))
    print('left out as only Benign/Questionable:', neither, '; dropped for length:', dropped_long or 0,
          '; with conflicting labels:', conflicting, '; sentences too short:', short,
          '; sentences marked only Benign/Questionable:', unclear)
    halves = {'dev': [], 'test': []}
    for lab in ('supported', 'not_supported'):
        taken, per_summary = 0, {}
        for k, _, text, s in sorted((c for c in claims if c[1] == lab), key=lambda c: c[0]):
            if taken == PER_LABEL:
                break
            if per_summary.get(key(s), 0) == 2:
                continue
            per_summary[key(s)] = per_summary.get(key(s), 0) + 1
            taken += 1
            people = len({a['annotator_id'] for a in s['annotations']})
            said = ', '.join(marks(s)) if s['annotations'] else 'nothing marked'
            item = {
                'id': f'{NAME}-{k[:10]}',
                'area': NAME,
                'passages': [s['source'].strip()],
                'claim': text,
                'label': lab,
                'note': f"FaithBench batch {s['batch']} #{s['sample_id']} ({s['metadata']['summarizer']}), a sentence of its summary; the summary's marks: {said}"
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
