#!/usr/bin/env python3
"""Converts the NIST judgments of the TREC 2017 LiveQA medical task into labelled
answer-correctness items (JSONL), split dev/test by the SHA-256 of the question.

Source: https://github.com/abachaa/LiveQA_MedicalTask_TREC2017 (commit
3f5a42ccbaa0b8ff1c665a6dc23785740ab0f09f): TestDataset/TREC-2017-LiveQA-Medical-Test.xml
(consumer health questions, the NIST assessors' paraphrase, reference answers) and
TestDataset/TREC-2017-LiveQA-Medical-qrels-NIST-692.txt (692 judged answers of the
participating systems, "question-number score answer-text").
Paper: Ben Abacha, Agichtein, Pinter, Demner-Fushman, "Overview of the Medical
Question Answering Task at TREC 2017 LiveQA", TREC 2017,
https://trec.nist.gov/pubs/trec26/papers/Overview-QA.pdf.
Licence: none stated in the repository (its readme asks for the citation above); see
NOTICE-LiveQA-Med.txt beside the output before redistributing.

What people did: NIST assessors judged each system answer (at most 1,000
characters) against the question paraphrase and the reference answers selected and
validated by medical experts, on the LiveQA scale 1 incorrect, 2 incorrect but
related, 3 correct but incomplete, 4 correct and complete (one assessor per answer;
-2 marks answers not judged on this scale).

Mapping: 4 -> correct, 3 -> partial, 2 and 1 -> incorrect; -2 is left out. Query is
the NIST paraphrase (what the assessors judged against; the patient's original
message is not used); reference is the question's reference answer(s), several joined as
"Reference answer 1: ... Reference answer 2: ...". Whitespace is collapsed and text
encoding damage in the judged answers (UTF-8 read as cp1252) repaired.

Selection: the same answer text judged twice for a question (several systems gave it;
the scores always agree) is kept once; items whose reference or answer exceeds 2,000
characters are dropped; of the rest, every "4", up to 60 "3" (there are fewer), 35
"2" and 35 "1", each in order of the SHA-256 of
question-number + TAB + answer. Halves: dev if the first hex digit of
SHA-256(query) is below 8, else test, so no question is in both.

    scripts/convert-liveqa-med.py /path/to/LiveQA_MedicalTask_TREC2017 tests/public_correctness/liveqa-med
"""
import hashlib, json, os, sys
import xml.etree.ElementTree as ET

MAX_CHARS = 2000
TAKE = {'4': None, '3': 60, '2': 35, '1': 35}
LABEL = {'4': 'correct', '3': 'partial', '2': 'incorrect', '1': 'incorrect'}
MEANING = {'4': 'correct and complete', '3': 'correct but incomplete',
           '2': 'incorrect but related', '1': 'incorrect'}


def sha(s):
    return hashlib.sha256(s.encode('utf-8')).hexdigest()


def unmojibake(s):
    """Undo UTF-8 text that was decoded as cp1252 (e.g. 'Â©' for a copyright sign)."""
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


def flat(s):
    return ' '.join(unmojibake(s or '').replace('\xa0', ' ').split())


def questions(repo):
    root = ET.parse(os.path.join(repo, 'TestDataset/TREC-2017-LiveQA-Medical-Test.xml')).getroot()
    qs = {}
    for q in root.findall('NLM-QUESTION'):
        refs = [flat(r.findtext('ANSWER')) for r in q.iter() if r.tag in ('ReferenceAnswer', 'RefAnswer')]
        refs = [r for r in refs if r]
        if len(refs) == 1:
            ref = refs[0]
        else:
            ref = ' '.join('Reference answer %d: %s' % (i + 1, r) for i, r in enumerate(refs))
        qs[q.get('qid')] = (flat(q.findtext('NIST-PARAPHRASE')), ref)
    return qs


def main(repo, out):
    qs = questions(repo)
    cands = {}
    dropped_long = 0
    with open(os.path.join(repo, 'TestDataset/TREC-2017-LiveQA-Medical-qrels-NIST-692.txt'), encoding='utf-8') as f:
        for line in f:
            num, score, answer = line.rstrip('\n').split(' ', 2)
            if score not in LABEL:
                continue
            query, ref = qs['TQ' + num]
            resp = flat(answer)
            if not (query and ref and resp):
                continue
            if max(len(query), len(ref), len(resp)) > MAX_CHARS:
                dropped_long += 1
                continue
            k = sha(num + '\t' + resp)
            if k not in cands:
                cands[k] = (score, num, query, ref, resp)
    taken = []
    for score, n in TAKE.items():
        chosen = [k for k in sorted(cands) if cands[k][0] == score]
        taken += chosen if n is None else chosen[:n]
    halves = {'dev': [], 'test': []}
    for k in taken:
        score, num, query, ref, resp = cands[k]
        item = {
            'id': 'liveqa-med-' + k[:10],
            'area': 'liveqa-med',
            'query': query,
            'reference': ref,
            'response': resp,
            'label': LABEL[score],
            'note': 'TREC 2017 LiveQA medical, question TQ%s, NIST assessor score %s (%s); one assessor'
                    % (num, score, MEANING[score]),
        }
        half = 'dev' if int(sha(query)[0], 16) < 8 else 'test'
        halves[half].append(item)
    for half, items in halves.items():
        os.makedirs(os.path.join(out, half), exist_ok=True)
        items.sort(key=lambda i: i['id'])
        with open(os.path.join(out, half, 'liveqa-med.jsonl'), 'w', encoding='utf-8', newline='\n') as f:
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
