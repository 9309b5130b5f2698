#!/usr/bin/env python3
"""Converts TruthfulQA's human-judged model answers into labelled
answer-correctness items (JSONL), split dev/test by the SHA-256 of the question.

Sources:
- the judgements: https://github.com/yizhongw/truthfulqa_reeval (commit
  2de12d7832345d6bf97bc9050bdae48c50e67bf0), data/finetune_truth.jsonl and
  data/finetune_info.jsonl: TruthfulQA's own judge fine-tuning files, republished
  unchanged (one row per judged answer, `Q: ...\\nA: ...\\nTrue:` / `Helpful:`,
  completion " yes" or " no").
- the references: https://github.com/benedictflorance/truthfulqa_experiments
  (commit 6fdfd38288e86296582a584694df5cf43d1f634a), datasets/TruthfulQA.csv, a
  copy of TruthfulQA's question file (Best Answer, Correct Answers, Incorrect
  Answers per question).
Paper: Lin, Hilton, Evans, "TruthfulQA: Measuring How Models Mimic Human
Falsehoods", ACL 2022, https://arxiv.org/abs/2109.07958.
Licence: Apache-2.0 (TruthfulQA and truthfulqa_reeval; LICENSE-TruthfulQA.txt and
NOTICE-TruthfulQA.txt beside the output).

What people did: TruthfulQA's authors judged answers that GPT-3, GPT-Neo/J, GPT-2
and UnifiedQA models gave to the 817 questions, each for truthfulness ("True:")
and for informativeness ("Helpful:"); the fine-tuning files also hold the
dataset's own reference answers, labelled by construction.

Mapping: the dataset's reference answers are dropped (an answer whose normalised
text is the question's Best Answer or one of its Correct or Incorrect Answers in
TruthfulQA.csv), so only people's judgements of model answers remain; so are
answers given two truth labels and questions not in TruthfulQA.csv. A model answer
judged truthful and informative (every "Helpful" label yes) -> correct; judged not
truthful -> incorrect (whatever its informativeness). An answer judged truthful but
not informative ("I have no comment", an echo of the question) is dropped: it is
true because it says nothing, and against a reference it is neither the same
answer nor a wrong one. The reference is the question's Best Answer (one sentence).

Selection: for each label, 100 answers in order of SHA-256(question + TAB +
answer), at most one per question and label; answers over 2,000 characters would
be dropped (none are: the longest is 275). Halves: dev if the first hex digit of
SHA-256(question) is below 8, else test, so no question is in both.

    scripts/convert-truthfulqa.py /path/to/truthfulqa_reeval /path/to/TruthfulQA.csv tests/public_correctness/truthfulqa
"""
import csv, hashlib, json, os, re, sys

MAX_CHARS = 2000
PER_LABEL = 100


def sha(s):
    return hashlib.sha256(s.encode('utf-8')).hexdigest()


def norm(s):
    return ' '.join(re.sub(r'[^a-z0-9 ]', ' ', s.lower()).split())


def judged(path, tag):
    """(question, answer) -> the set of labels given ("yes"/"no")."""
    out = {}
    with open(path, encoding='utf-8') as f:
        for line in f:
            d = json.loads(line)
            m = re.match(r'Q: (.*)\nA: (.*)\n' + tag + r':$', d['prompt'], re.S)
            if not m:
                raise ValueError('%s: unreadable row %r' % (path, d['prompt'][:80]))
            out.setdefault((m.group(1).strip(), m.group(2).strip()), set()).add(d['completion'].strip())
    return out


def slug(s):
    return re.sub(r'[^a-z0-9]+', '-', s.lower()).strip('-')


def main(repo, csv_path, out):
    with open(csv_path, newline='', encoding='utf-8') as f:
        questions = {r['Question'].strip(): r for r in csv.DictReader(f)}
    truth = judged(os.path.join(repo, 'data/finetune_truth.jsonl'), 'True')
    info = judged(os.path.join(repo, 'data/finetune_info.jsonl'), 'Helpful')
    counts = {'reference answers': 0, 'question not in csv': 0, 'two truth labels': 0,
              'truthful, not informative': 0, 'too long': 0}
    cands = {}
    for (q, a), labels in truth.items():
        row = questions.get(q)
        if row is None:
            counts['question not in csv'] += 1
            continue
        refs = [row['Best Answer']] + row['Correct Answers'].split(';') + row['Incorrect Answers'].split(';')
        if norm(a) in {norm(r) for r in refs}:
            counts['reference answers'] += 1
            continue
        if len(labels) != 1:
            counts['two truth labels'] += 1
            continue
        true = labels == {'yes'}
        helpful = info.get((q, a), set())
        if true and helpful != {'yes'}:
            counts['truthful, not informative'] += 1
            continue
        if max(len(q), len(a), len(row['Best Answer'])) > MAX_CHARS:
            counts['too long'] += 1
            continue
        cands[sha(q + '\t' + a)] = (true, q, a, row, sorted(helpful))
    taken = []
    for want in (True, False):
        seen_q = set()
        for k in sorted(cands):
            true, q, a, row, helpful = cands[k]
            if true != want or q in seen_q:
                continue
            seen_q.add(q)
            taken.append(k)
            if len(seen_q) == PER_LABEL:
                break
    halves = {'dev': [], 'test': []}
    for k in taken:
        true, q, a, row, helpful = cands[k]
        item = {
            'id': 'truthfulqa-' + k[:10],
            'area': 'truthfulqa-' + slug(row['Category']),
            'query': q,
            'reference': row['Best Answer'].strip(),
            'response': a,
            'label': 'correct' if true else 'incorrect',
            'note': 'TruthfulQA judged model answer: True: %s; Helpful: %s (%s question, %s)'
                    % ('yes' if true else 'no', '/'.join(helpful) or 'not judged', row['Type'].lower(), row['Category']),
        }
        half = 'dev' if int(sha(q)[0], 16) < 8 else 'test'
        halves[half].append(item)
    for half, items in halves.items():
        os.makedirs(os.path.join(out, half), exist_ok=True)
        items.sort(key=lambda i: i['id'])
        with open(os.path.join(out, half, 'truthfulqa.jsonl'), 'w', encoding='utf-8', newline='\n') as f:
            for item in items:
                f.write(json.dumps(item, ensure_ascii=False) + '\n')
        labels = {}
        for i in items:
            labels[i['label']] = labels.get(i['label'], 0) + 1
        print(half, len(items), dict(sorted(labels.items())), file=sys.stderr)
    print('candidates:', len(cands), 'left out:', counts, file=sys.stderr)


if __name__ == '__main__':
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3])
