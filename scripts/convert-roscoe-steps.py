#!/usr/bin/env python3
"""Converts ROSCOE's expert labels for missing steps and for contradictions in
step-by-step answers into labelled criteria items (JSONL), split dev/test by the
SHA-256 of the question.

Source: https://github.com/dmg-illc/JUDGE-BENCH (commit
5a0bf500325029efb5dc8adff2c1e991996f0e78), data/roscoe/roscoe-{gsm8k,drop,cosmos,esnli}-overall.json:
JUDGE-BENCH's conversion of the ROSCOE annotations
(https://dl.fbaipublicfiles.com/parlai/projects/roscoe/annotations.zip) restored
with the problems they were written for.
Paper: Golovneva et al., "ROSCOE: A Suite of Metrics for Scoring Step-by-Step
Reasoning", ICLR 2023, https://arxiv.org/abs/2212.07919; JUDGE-BENCH: Bavaresco et
al., ACL 2025, https://aclanthology.org/2025.acl-short.20/.
Licence: the ROSCOE annotations: MIT (released with ParlAI). The problems: GSM8K MIT;
CosmosQA CC BY 4.0; DROP CC BY-SA 4.0; e-SNLI MIT over SNLI, CC BY-SA 4.0. One file
per problem set, each under its set's licence (NOTICE-ROSCOE.txt beside the output).

What people did: an expert read each problem (with its reference solution or the
correct yes/no relation) and a step-by-step answer written by GPT-3 and answered,
among other questions, "Is the reasoning in the generated response incomplete and
lacking required information to produce the correct answer?" (Missing Steps) and
"Do steps contradict each other or fail to follow a cohesive story?"
(Contradiction), yes or no; one annotator per answer. DROP, CosmosQA and e-SNLI
problems are recast by ROSCOE as "Is the Claim supported by the Situation?".

Mapping: two rules, one per label, written as what a good answer does:
  MISSING_RULE  meets where the expert said no step is missing;
  CONSISTENT_RULE  meets where the expert said no step contradicts another.
The query is the problem as the answer's writer saw it (GSM8K: the question; the
others: "Situation: ...\\n\\nClaim: ...\\n\\nIs the claim supported by the
situation?"); the response is GPT-3's answer (`Step N - ...`). The reference
solution or relation is not given to the judge.

Selection: for each rule and label, 40 answers in order of SHA-256(set + TAB +
query + TAB + response), over all four sets; an answer may be chosen for both
rules. Texts over 2,000 characters would be dropped (none are). Halves: dev if the
first hex digit of SHA-256(query) is below 8, else test, so an answer and its
problem are in one half whatever rule it is judged by.

    scripts/convert-roscoe-steps.py /path/to/JUDGE-BENCH tests/public_criteria/roscoe
"""
import hashlib, json, os, re, sys

MAX_CHARS = 2000
PER_LABEL = 40
SETS = ('gsm8k', 'drop', 'cosmos', 'esnli')
MISSING_RULE = ('The reasoning is complete: it states every step and every piece of information '
                'needed to reach its answer, with no required step left out.')
CONSISTENT_RULE = ('The reasoning is consistent: no step contradicts another, and the steps '
                   'follow one cohesive line of argument.')
RULES = (('missing', 'Missing Steps', MISSING_RULE), ('consistent', 'Contradiction', CONSISTENT_RULE))
GSM = re.compile(r'CONTEXT:\nQuestion: (.*?)\n\\?Solution: (.*?)\n\nGENERATED RESPONSE:\n(.*?)\nJudge the generated response:\n$', re.S)
NLI = re.compile(r'CONTEXT:\nSituation \(Premise\): (.*?)\n\nClaim \(Hypothesis\): (.*?)\n\nIs the Claim supported by the Situation\?\n\n'
                 r'Correct Relationship \(Yes or No\): (.*?)\n\nGENERATED RESPONSE:\n(.*?)\nJudge the generated response:\n$', re.S)


def sha(s):
    return hashlib.sha256(s.encode('utf-8')).hexdigest()


def read(repo, name):
    with open(os.path.join(repo, 'data/roscoe/roscoe-%s-overall.json' % name), encoding='utf-8') as f:
        data = json.load(f)
    out = []
    for inst in data['instances']:
        m = (GSM if name == 'gsm8k' else NLI).search(inst['instance'])
        if not m:
            raise ValueError('%s instance %s: unexpected layout' % (name, inst['id']))
        if name == 'gsm8k':
            query, response = m.group(1).strip(), m.group(3).strip()
        else:
            situation, claim, _, response = (s.strip() for s in m.groups())
            query = 'Situation: %s\n\nClaim: %s\n\nIs the claim supported by the situation?' % (situation, claim)
        out.append((inst, query, response))
    return out


def main(repo, out):
    cands = {}
    dropped_long = 0
    for name in SETS:
        for inst, query, response in read(repo, name):
            if max(len(query), len(response)) > MAX_CHARS:
                dropped_long += 1
                continue
            cands[sha(name + '\t' + query + '\t' + response)] = (name, inst, query, response)
    halves = {'dev': {}, 'test': {}}
    for key, metric, rule in RULES:
        for flaw in ('no', 'yes'):
            chosen = [k for k in sorted(cands) if cands[k][1]['annotations'][metric]['majority_human'] == flaw][:PER_LABEL]
            for k in chosen:
                name, inst, query, response = cands[k]
                item = {
                    'id': 'roscoe-%s-%s-%s' % (name, key, k[:10]),
                    'area': 'roscoe-%s-%s' % (name, key),
                    'criteria': rule,
                    'query': query,
                    'response': response,
                    'label': 'meets' if flaw == 'no' else 'fails',
                    'note': 'ROSCOE %s (JUDGE-BENCH id %d): expert "%s": %s; overall quality %d of 5'
                            % (name, inst['id'], metric, flaw, inst['annotations']['Overall Quality']['majority_human']),
                }
                half = 'dev' if int(sha(query)[0], 16) < 8 else 'test'
                halves[half].setdefault(name, []).append(item)
    for half, files in halves.items():
        os.makedirs(os.path.join(out, half), exist_ok=True)
        for name in SETS:
            items = sorted(files.get(name, []), key=lambda i: i['id'])
            with open(os.path.join(out, half, 'roscoe-%s.jsonl' % name), 'w', encoding='utf-8', newline='\n') as f:
                for item in items:
                    f.write(json.dumps(item, ensure_ascii=False) + '\n')
            counts = {}
            for i in items:
                k = i['area'].rsplit('-', 1)[1] + ' ' + i['label']
                counts[k] = counts.get(k, 0) + 1
            print(half, name, len(items), dict(sorted(counts.items())), file=sys.stderr)
    print('dropped for length:', dropped_long, file=sys.stderr)


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
