#!/usr/bin/env python3
"""Converts the human judgments of ehsk/OpenQA-eval into labelled answer-correctness
items (JSONL), split dev/test by the SHA-256 of the question.

Source: https://github.com/ehsk/OpenQA-eval (commit 8b9317d0f0c92b52e1c71c0168dff74b5f76a5f4),
data/NQ301_human.tsv (judgments) and data/model_outputs/NQ_DPR.jsonl (the gold
answers of NQ-open, for the reference).
Paper: Kamalloo, Dziri, Clarke, Rafiei, "Evaluating Open-Domain Question Answering
in the Era of Large Language Models", ACL 2023, https://arxiv.org/abs/2305.06984.
Licence: the repository is MIT (LICENSE-OpenQA-eval.txt beside the output); the
questions and gold answers come from Natural Questions (NQ-open), CC BY-SA 3.0
(NOTICE-NQ.txt).

What people did: for 301 NQ-open test questions the authors judged every distinct
answer of 12 open-domain QA systems (retriever-readers and InstructGPT, whose answers
are often whole sentences) as acceptable or not given the question and the gold
answers; two annotators per answer, a third on disagreements ("Acceptable?" is the
final call).

Mapping: "Yes" -> correct, "No" -> incorrect (no partial label in the source).
Kept only answers whose every annotator agreed with the final call. The reference
is the NQ gold answer list: one answer as is, several as
`Accepted answers: "A"; "B"` (any one of them counts, as in NQ). Text encoding
damage in the source (UTF-8 read as cp1252) is repaired; non-breaking spaces become
spaces.

Selection: for each label, 30 long answers (over 40 characters, mostly InstructGPT
sentences) and 50 short ones, each stratum taken in order of the SHA-256 of
question + TAB + answer, at most one per question in a stratum. Items whose texts
exceed 2,000 characters are dropped (none do). Halves: dev if the first hex digit
of SHA-256(question) is below 8, else test, so no question is in both.

    scripts/convert-openqa.py /path/to/OpenQA-eval tests/public_correctness/openqa
"""
import csv, hashlib, json, os, sys

MAX_CHARS = 2000
PER_LABEL = {'long': 30, 'short': 50}
LONG = 40


def sha(s):
    return hashlib.sha256(s.encode('utf-8')).hexdigest()


def unmojibake(s):
    """Undo UTF-8 text that was decoded as cp1252 (e.g. 'â€“' for an en dash)."""
    if not any(c in s for c in 'ÃÂâÅ'):
        return s
    raw = bytearray()
    for c in s:
        try:
            raw += c.encode('cp1252')
        except UnicodeEncodeError:
            if ord(c) < 256:
                raw.append(ord(c))
            else:
                return s
    try:
        return raw.decode('utf-8')
    except UnicodeDecodeError:
        return s


def clean(s):
    return unmojibake(s).replace('\xa0', ' ').strip()


def gold_answers(repo):
    gold = {}
    with open(os.path.join(repo, 'data/model_outputs/NQ_DPR.jsonl'), encoding='utf-8') as f:
        for line in f:
            d = json.loads(line)
            answers = []
            for a in d['answer']:
                a = clean(a)
                if a and a not in answers:
                    answers.append(a)
            gold[d['question']] = answers
    return gold


def reference(answers):
    if len(answers) == 1:
        return answers[0]
    return 'Accepted answers: ' + '; '.join('"%s"' % a for a in answers)


def main(repo, out):
    gold = gold_answers(repo)
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
        resp = clean(r['Model answer'])
        ref = reference(gold[r['Question']])
        if not resp:
            continue
        if max(len(q), len(resp), len(ref)) > MAX_CHARS:
            dropped_long += 1
            continue
        k = sha(q + '\t' + resp)
        if k in cands:
            continue
        stratum = 'long' if len(resp) > LONG else 'short'
        cands[k] = (final, stratum, q, resp, ref, anns)
    taken = []
    for final in ('Yes', 'No'):
        for stratum, n in PER_LABEL.items():
            seen_q = set()
            chosen = 0
            for k in sorted(cands):
                lab, st, q, resp, ref, anns = cands[k]
                if lab != final or st != stratum or q in seen_q:
                    continue
                seen_q.add(q)
                taken.append((k, cands[k]))
                chosen += 1
                if chosen == n:
                    break
    halves = {'dev': [], 'test': []}
    for k, (final, stratum, q, resp, ref, anns) in taken:
        item = {
            'id': 'openqa-' + k[:10],
            'area': 'nq-' + stratum,
            'query': q,
            'reference': ref,
            'response': resp,
            'label': 'correct' if final == 'Yes' else 'incorrect',
            'note': 'OpenQA-eval NQ301 human judgment: Acceptable? %s; annotators %s (unanimous)'
                    % (final, '/'.join(anns)),
        }
        half = 'dev' if int(sha(q)[0], 16) < 8 else 'test'
        halves[half].append(item)
    for half, items in halves.items():
        os.makedirs(os.path.join(out, half), exist_ok=True)
        items.sort(key=lambda i: i['id'])
        with open(os.path.join(out, half, 'openqa.jsonl'), 'w', encoding='utf-8', newline='\n') as f:
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
