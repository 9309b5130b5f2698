#!/usr/bin/env python3
"""Converts part of Fool Me Twice (google-research/fool-me-twice) into labelled claims
in the JSONL form `cargo ragaliq calibrate` reads, split dev/test by a rule that
looks at ids only.

Fool Me Twice, FM2 (Eisenschlos, Dhingra, Bulian, Börschinger, Boyd-Graber, NAACL
2021, "Fool Me Twice: Entailment from Wikipedia Gamification",
https://aclanthology.org/2021.naacl-main.32/): statements about a Wikipedia page written by
players of a game, each with the sentences of the page (the gold evidence) that the
writer chose to back it, and the writer's label SUPPORTS or REFUTES; other players
then tried to tell the true from the false ones. The repository is under the
Apache 2.0 licence (LICENSE-fm2.txt); the evidence sentences are Wikipedia text
(see NOTICE-fm2.txt beside the output). Used here: dataset/dev.jsonl and
dataset/test.jsonl (the train file is over the size a snapshot holds).

A statement becomes a claim; each of its gold evidence sentences, written
"Page title: sentence", a passage. SUPPORTS is `supported`, REFUTES is
`contradicted` (the writer chose the sentences to show the statement false; FM2
has no "not enough info" class, so `no_evidence` never occurs). Items over 2,000
characters of passage would be dropped (none are). Taken: 100 of each label, each
chosen by the SHA-256 of its text (passages and statement, tab-separated), so the
same source gives the same set. The players' votes are only copied into the note.

    scripts/convert-fm2.py /path/to/fool-me-twice tests/public_claims/fm2

Each half holds `fm2.jsonl`.
"""
import hashlib, json, os, sys

NAME = 'fm2'
FILES = ('dataset/dev.jsonl', 'dataset/test.jsonl')
LABELS = {'SUPPORTS': 'supported', 'REFUTES': 'contradicted'}
PER_LABEL = 100
MAX_PASSAGE_CHARS = 2000

def passages(r):
    out = []
    for e in r['gold_evidence']:
        p = f"{r['wikipedia_page'].strip()}: {e['text'].strip()}"
        if p not in out:
            out.append(p)
    return out

def key(r):
    return hashlib.sha256(('\t'.join(passages(r)) + '\t' + r['text'].strip()).encode()).hexdigest()

def main(repo, out):
    usable, dropped_long = [], {}
    for path in FILES:
        split = os.path.basename(path).split('.')[0]
        with open(os.path.join(repo, path), encoding='utf-8') as f:
            for line in f:
                if not line.strip():
                    continue
                r = json.loads(line)
                r['split'] = split
                if not r['gold_evidence']:
                    continue
                if sum(len(p) for p in passages(r)) > MAX_PASSAGE_CHARS:
                    dropped_long[r['label']] = dropped_long.get(r['label'], 0) + 1
                else:
                    usable.append(r)
    print('dropped for length:', dropped_long or 0)
    halves = {'dev': [], 'test': []}
    seen = set()
    for label in LABELS:
        for r in sorted((r for r in usable if r['label'] == label), key=key)[:PER_LABEL]:
            k = key(r)
            if k in seen:
                continue
            seen.add(k)
            item = {
                'id': f'{NAME}-{k[:10]}',
                'area': NAME,
                'passages': passages(r),
                'claim': r['text'].strip(),
                'label': LABELS[label],
                'note': f"FM2 {r['split']} {r['id']} ({r['category']}; {r['correct_votes']} of {r['total_votes']} players guessed it): {label}",
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
