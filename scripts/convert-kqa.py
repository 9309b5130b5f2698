#!/usr/bin/env python3
"""Converts the physician labels of K-QA (Itaymanes/K-QA, dataset/NLI_medical_annotator.csv)
into labelled criteria items (JSONL), split dev/test by the SHA-256 of the question.

Source: https://github.com/Itaymanes/K-QA (commit ef403d012e199fcfa0d8c02b38a96ff95164f4d0).
Paper: Manes, Ronn, Cohen, Ilan Ber, Horowitz-Kugler, Stanovsky, "K-QA: A Real-World
Medical Q&A Benchmark", 2024, https://arxiv.org/abs/2401.14493.
Licence: MIT (LICENSE-K-QA.txt beside the output).

What people did: for real patient questions, K-QA's physicians wrote a reference
answer and broke it into statements, each marked "Must_have" or "Nice_to_have" -- the
points a good answer should make. For 399 (statement, LLM answer) pairs (answers of
GPT-3.5, GPT-4, Bard and a fourth system the file calls "askk", apparently K Health's
own, to 50 questions) three physicians each
labelled whether the answer entails the statement ("Entailment"), says nothing
about it ("Neutral") or contradicts it ("Contradiction"); the file gives the
majority.

Mapping: a statement becomes the criterion "The answer must state that: <statement>";
the patient question is the query; majority "Entailment" -> meets, "Neutral" or
"Contradiction" -> fails (the note keeps all three physicians' labels).

Selection: items whose answer exceeds 2,000 characters are dropped; then every
"Contradiction", and "Entailment" and "Neutral" items in order of the SHA-256 of
statement + TAB + answer, until there are 90 meets and 90 fails. Each statement
is used with one answer only in K-QA, so criteria are not shared between responses.
Halves: dev if the first hex digit of SHA-256(question) is below 8, else test; as
every statement belongs to one question, no criteria text, question or answer is in
both halves.

    scripts/convert-kqa.py /path/to/K-QA tests/public_criteria/kqa
"""
import csv, hashlib, json, os, sys

MAX_CHARS = 2000
PER_LABEL = 90


def sha(s):
    return hashlib.sha256(s.encode('utf-8')).hexdigest()


def main(repo, out):
    with open(os.path.join(repo, 'dataset/NLI_medical_annotator.csv'), newline='', encoding='utf-8') as f:
        rows = list(csv.DictReader(f))
    cands = {}
    dropped_long = 0
    for r in rows:
        claim = ' '.join(r['claim'].split())
        question = ' '.join(r['Question'].split())
        answer = r['answer'].strip()
        criteria = 'The answer must state that: ' + claim
        if max(len(criteria), len(question), len(answer)) > MAX_CHARS:
            dropped_long += 1
            continue
        k = sha(claim + '\t' + answer)
        if k not in cands:
            cands[k] = (r, claim, question, answer, criteria)
    order = sorted(cands)
    contra = [k for k in order if cands[k][0]['majority_label'] == 'Contradiction']
    neutral = [k for k in order if cands[k][0]['majority_label'] == 'Neutral']
    entail = [k for k in order if cands[k][0]['majority_label'] == 'Entailment']
    taken = entail[:PER_LABEL] + contra + neutral[:PER_LABEL - len(contra)]
    halves = {'dev': [], 'test': []}
    for k in taken:
        r, claim, question, answer, criteria = cands[k]
        majority = r['majority_label']
        item = {
            'id': 'kqa-' + k[:10],
            'area': 'kqa-' + r['category_x'].lower().replace('_', '-'),
            'criteria': criteria,
            'query': question,
            'response': answer,
            'label': 'meets' if majority == 'Entailment' else 'fails',
            'note': 'K-QA %s statement, answer by %s; physicians: %s (majority %s)'
                    % (r['category_x'], r['llm_x'], '/'.join(r['label_%d' % i] for i in range(3)), majority),
        }
        half = 'dev' if int(sha(question)[0], 16) < 8 else 'test'
        halves[half].append(item)
    for half, items in halves.items():
        os.makedirs(os.path.join(out, half), exist_ok=True)
        items.sort(key=lambda i: i['id'])
        with open(os.path.join(out, half, 'kqa.jsonl'), 'w', encoding='utf-8', newline='\n') as f:
            for item in items:
                f.write(json.dumps(item, ensure_ascii=False) + '\n')
        counts = {}
        for i in items:
            counts[i['label']] = counts.get(i['label'], 0) + 1
        print(half, len(items), dict(sorted(counts.items())), file=sys.stderr)
    print('dropped for length:', dropped_long, file=sys.stderr)


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
