#!/usr/bin/env python3
"""More of OpenQA-eval's judged NQ answers (the same source as `openqa`, the
answers `scripts/convert-openqa.py` did not take), as labelled answer-correctness
items (JSONL), split dev/test by the same rule, so a question is in the same half
here as there.

Source, paper, licence and what people did: as scripts/convert-openqa.py
(https://github.com/ehsk/OpenQA-eval, commit
8b9317d0f0c92b52e1c71c0168dff74b5f76a5f4, data/NQ301_human.tsv and
data/model_outputs/NQ_DPR.jsonl; Kamalloo et al., ACL 2023; MIT, with the NQ
questions and gold answers under CC BY-SA 3.0).

Why a second set and not a larger `openqa`: `openqa` is replayed by ragaliq's own
tests from committed recordings at published figures; these answers extend the
same source for measurement (bench/bands) without changing it. Read together they
are one source (NQ301): `scripts/band-designs.py` counts both as `openqa`.

Mapping: as convert-openqa.py (Yes -> correct, No -> incorrect, only answers
every annotator agreed on, the gold list as the reference, encoding damage
repaired).

Selection: of the agreed answers that `openqa` does not hold (by question and
answer), for each label 120 answers in order of SHA-256(question + TAB + answer),
at most one per question and label, long and short answers alike. Texts over 2,000
characters would be dropped (none are). Halves: dev if the first hex digit of
SHA-256(question) is below 8, else test.

    scripts/convert-openqa-more.py /path/to/OpenQA-eval tests/public_correctness/openqa-more

(run after scripts/convert-openqa.py has written tests/public_correctness/openqa,
whose answers it leaves out).
"""
import csv, hashlib, json, os, sys

MAX_CHARS = 2000
PER_LABEL = 120
HERE = os.path.dirname(os.path.abspath(__file__))
OPENQA = os.path.join(os.path.dirname(HERE), 'tests', 'public_correctness', 'openqa')


def load_openqa():
    """convert-openqa.py's functions (its name has a dash, so no plain import)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location('convert_openqa', os.path.join(HERE, 'convert-openqa.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def sha(s):
    return hashlib.sha256(s.encode('utf-8')).hexdigest()


def main(repo, out):
    co = load_openqa()
    taken_before = set()
    for half in ('dev', 'test'):
        with open(os.path.join(OPENQA, half, 'openqa.jsonl'), encoding='utf-8') as f:
            for line in f:
                d = json.loads(line)
                taken_before.add(sha(d['query'] + '\t' + d['response']))
    gold = co.gold_answers(repo)
    with open(os.path.join(repo, 'data/NQ301_human.tsv'), newline='', encoding='utf-8') as f:
        rows = list(csv.DictReader(f, delimiter='\t', quoting=csv.QUOTE_NONE))
    cands = {}
    dropped_long = 0
    for r in rows:
        final = r['Acceptable?'].strip()
        anns = [r[k].strip() for k in ('annotator1', 'annotator2', 'annotator3') if r[k].strip()]
        if final not in ('Yes', 'No') or not anns or any(a != final for a in anns):
            continue
        q = r['Question'].strip()
        resp = co.clean(r['Model answer'])
        ref = co.reference(gold[r['Question']])
        if not resp:
            continue
        k = sha(q + '\t' + resp)
        if k in cands or k in taken_before:
            continue
        if max(len(q), len(resp), len(ref)) > MAX_CHARS:
            dropped_long += 1
            continue
        cands[k] = (final, q, resp, ref, anns)
    halves = {'dev': [], 'test': []}
    for want in ('Yes', 'No'):
        seen_q = set()
        for k in sorted(cands):
            final, q, resp, ref, anns = cands[k]
            if final != want or q in seen_q:
                continue
            seen_q.add(q)
            item = {
                'id': 'openqa-' + k[:10],
                'area': 'nq-' + ('long' if len(resp) > co.LONG else 'short'),
                'query': q,
                'reference': ref,
                'response': resp,
                'label': 'correct' if final == 'Yes' else 'incorrect',
                'note': 'OpenQA-eval NQ301 human judgment: Acceptable? %s; annotators %s (unanimous)'
                        % (final, '/'.join(anns)),
            }
            halves['dev' if int(sha(q)[0], 16) < 8 else 'test'].append(item)
            if len(seen_q) == PER_LABEL:
                break
    for half, items in halves.items():
        os.makedirs(os.path.join(out, half), exist_ok=True)
        items.sort(key=lambda i: i['id'])
        with open(os.path.join(out, half, 'openqa-more.jsonl'), 'w', encoding='utf-8', newline='\n') as f:
            for item in items:
                f.write(json.dumps(item, ensure_ascii=False) + '\n')
        counts = {}
        for i in items:
            counts[i['label']] = counts.get(i['label'], 0) + 1
        print(half, len(items), dict(sorted(counts.items())), file=sys.stderr)
    print('candidates:', len(cands), 'dropped for length:', dropped_long, file=sys.stderr)


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
