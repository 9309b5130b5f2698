#!/usr/bin/env python3
"""Converts ROSCOE's expert-judged GSM8K answers (overall quality) into labelled
answer-correctness items (JSONL) with long references, split dev/test by the
SHA-256 of the question.

Source: https://github.com/dmg-illc/JUDGE-BENCH (commit
5a0bf500325029efb5dc8adff2c1e991996f0e78), data/roscoe/roscoe-gsm8k-overall.json:
JUDGE-BENCH's conversion of the ROSCOE annotations
(https://dl.fbaipublicfiles.com/parlai/projects/roscoe/annotations.zip) restored
with the GSM8K problems.
Paper: Golovneva, Chen, Poff, Corredor, Zettlemoyer, Fazel-Zarandi, Celikyilmaz,
"ROSCOE: A Suite of Metrics for Scoring Step-by-Step Reasoning", ICLR 2023,
https://arxiv.org/abs/2212.07919; JUDGE-BENCH: Bavaresco et al., "LLMs instead of
Human Judges?", ACL 2025, https://aclanthology.org/2025.acl-short.20/.
Licence: the ROSCOE annotations are released with ParlAI under the MIT licence;
GSM8K (problems and reference solutions, Cobbe et al. 2021) is MIT
(LICENSE-ROSCOE.txt, LICENSE-GSM8K.txt and NOTICE-ROSCOE.txt beside the output).

What people did: an expert read each GSM8K problem with its reference solution and
a step-by-step answer written by GPT-3, and rated the answer's overall quality, "Does
the generated response answer the question in a well-justified manner?
(1=incomprehensible and wrong, 5=clear and correct)"; one annotator per answer.

Mapping: overall quality 4 or 5 -> correct; 1 or 2 -> incorrect; 3 (the scale's
midpoint, neither "clear and correct" nor wrong; 2 answers) is left out. The
question is the query; the reference is GSM8K's reference solution as shown to the
expert (its steps, with GSM8K's calculator notes `<<...>>`, and the final
`A: <number>` line): a long reference. The response is GPT-3's answer as shown
(steps `Step N - ...`).

Selection: every answer (no answer, question or reference is over 2,000
characters). Halves: dev if the first hex digit of SHA-256(question) is below 8,
else test (one answer per question in this file).

    scripts/convert-roscoe-gsm8k.py /path/to/JUDGE-BENCH tests/public_correctness/roscoe-gsm8k
"""
import hashlib, json, os, re, sys

MAX_CHARS = 2000
SHAPE = re.compile(r'CONTEXT:\nQuestion: (.*?)\n\\?Solution: (.*?)\n\nGENERATED RESPONSE:\n(.*?)\nJudge the generated response:\n$', re.S)


def sha(s):
    return hashlib.sha256(s.encode('utf-8')).hexdigest()


def main(repo, out):
    with open(os.path.join(repo, 'data/roscoe/roscoe-gsm8k-overall.json'), encoding='utf-8') as f:
        data = json.load(f)
    halves = {'dev': [], 'test': []}
    left = {'quality 3': 0, 'too long': 0}
    for inst in data['instances']:
        m = SHAPE.search(inst['instance'])
        if not m:
            raise ValueError('instance %s: unexpected layout' % inst['id'])
        q, solution, response = (s.strip() for s in m.groups())
        quality = inst['annotations']['Overall Quality']['majority_human']
        if quality == 3:
            left['quality 3'] += 1
            continue
        if max(len(q), len(solution), len(response)) > MAX_CHARS:
            left['too long'] += 1
            continue
        item = {
            'id': 'roscoe-gsm8k-' + sha(q + '\t' + response)[:10],
            'area': 'roscoe-gsm8k',
            'query': q,
            'reference': solution,
            'response': response,
            'label': 'correct' if quality >= 4 else 'incorrect',
            'note': 'ROSCOE GSM8K (JUDGE-BENCH id %d): expert overall quality %d of 5; missing steps: %s; contradiction: %s'
                    % (inst['id'], quality, inst['annotations']['Missing Steps']['majority_human'],
                       inst['annotations']['Contradiction']['majority_human']),
        }
        halves['dev' if int(sha(q)[0], 16) < 8 else 'test'].append(item)
    for half, items in halves.items():
        os.makedirs(os.path.join(out, half), exist_ok=True)
        items.sort(key=lambda i: i['id'])
        with open(os.path.join(out, half, 'roscoe-gsm8k.jsonl'), 'w', encoding='utf-8', newline='\n') as f:
            for item in items:
                f.write(json.dumps(item, ensure_ascii=False) + '\n')
        labels = {}
        for i in items:
            labels[i['label']] = labels.get(i['label'], 0) + 1
        print(half, len(items), dict(sorted(labels.items())), file=sys.stderr)
    print('left out:', left, file=sys.stderr)


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
