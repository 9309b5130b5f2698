#!/usr/bin/env python3
"""Converts the expert soundness labels of "Inferential Strategies" (LLMs'
step-by-step answers to problems of propositional logic) into labelled criteria
items (JSONL), split dev/test by the SHA-256 of the problem.

Source: https://github.com/dmg-illc/JUDGE-BENCH (commit
5a0bf500325029efb5dc8adff2c1e991996f0e78),
data/inferential-strategies/inferential_strategies.json: JUDGE-BENCH's conversion
of https://huggingface.co/datasets/mainlp/inferential_strategies.
Paper: Mondorf and Plank, "Comparing Inferential Strategies of Humans and Large
Language Models in Deductive Reasoning", ACL 2024, https://arxiv.org/abs/2402.14856.
Licence: CC BY 4.0 (the dataset's card; LICENSE-CC-BY-4.0.txt and
NOTICE-inferential-strategies.txt beside the output).

What people did: Llama-2-chat (7B, 13B, 70B), Mistral-7B-Instruct and Zephyr-7B
each answered 12 problems of propositional logic (after Van der Henst et al. 2002)
with 5 seeds, explaining whether a conclusion follows from three statements; two
expert annotators judged whether each rationale is sound (logically valid), and
agreed on all 300 (58 sound, 242 not).

Mapping: one rule for every item, RULE below; the problem as the model saw it is
the query (without the `<|assistant|>` chat-template marker left at the end of
Zephyr's); the model's answer is the response; sound -> meets, not sound -> fails.

Selection: answers over 4,000 characters are dropped (Llama-2-chat writes long
rationales: a 2,000-character bound as elsewhere would keep 35 of the 58 sound
ones). Of the rest, per half: every sound answer and as many unsound ones, in order
of SHA-256(problem + TAB + answer). Halves: dev if the first hex digit of
SHA-256(problem) is below 8, else test; with 12 problems, each half holds all
answers to its problems (no problem is in both).

    scripts/convert-inferential.py /path/to/JUDGE-BENCH tests/public_criteria/inferential
"""
import hashlib, json, os, re, sys

MAX_CHARS = 4000
RULE = ('The reasoning is sound: every step follows logically from the statements or from earlier '
        'steps, so the conclusion it reaches is justified.')
SHAPE = re.compile(r'### PROBLEM STATEMENT\n\n(.*?)\n\n### MODEL RESPONSE\n\n(.*)$', re.S)


def sha(s):
    return hashlib.sha256(s.encode('utf-8')).hexdigest()


def main(repo, out):
    with open(os.path.join(repo, 'data/inferential-strategies/inferential_strategies.json'), encoding='utf-8') as f:
        data = json.load(f)
    cands = {'dev': {}, 'test': {}}
    dropped_long = 0
    for inst in data['instances']:
        m = SHAPE.search(inst['instance'])
        if not m:
            raise ValueError('instance %s: unexpected layout' % inst['id'])
        # Zephyr's prompts end in its chat template's `<|assistant|>` marker: not
        # part of the problem (the same problem is then one text for every model).
        problem = re.sub(r'\s*<\|assistant\|>\s*$', '', m.group(1)).strip()
        answer = m.group(2).strip()
        if max(len(problem), len(answer)) > MAX_CHARS:
            dropped_long += 1
            continue
        half = 'dev' if int(sha(problem)[0], 16) < 8 else 'test'
        cands[half][sha(problem + '\t' + answer)] = (inst, problem, answer)
    for half, pool in cands.items():
        sound = [k for k in sorted(pool) if pool[k][0]['annotations']['Sound Reasoning']['majority_human'] == 'yes']
        unsound = [k for k in sorted(pool) if pool[k][0]['annotations']['Sound Reasoning']['majority_human'] == 'no']
        items = []
        for k in sound + unsound[:len(sound)]:
            inst, problem, answer = pool[k]
            scores = inst['annotations']['Sound Reasoning']['individual_human_scores']
            items.append({
                'id': 'inferential-' + k[:10],
                'area': 'inferential-strategies',
                'criteria': RULE,
                'query': problem,
                'response': answer,
                'label': 'meets' if inst['annotations']['Sound Reasoning']['majority_human'] == 'yes' else 'fails',
                'note': 'Inferential Strategies (JUDGE-BENCH id %d): experts: sound reasoning %s'
                        % (inst['id'], '/'.join(scores)),
            })
        os.makedirs(os.path.join(out, half), exist_ok=True)
        items.sort(key=lambda i: i['id'])
        with open(os.path.join(out, half, 'inferential.jsonl'), 'w', encoding='utf-8', newline='\n') as f:
            for item in items:
                f.write(json.dumps(item, ensure_ascii=False) + '\n')
        counts = {}
        for i in items:
            counts[i['label']] = counts.get(i['label'], 0) + 1
        print(half, len(items), dict(sorted(counts.items())), len(set(i['query'] for i in items)), 'problems', file=sys.stderr)
    print('dropped for length:', dropped_long, file=sys.stderr)


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
