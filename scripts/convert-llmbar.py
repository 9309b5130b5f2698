#!/usr/bin/env python3
"""Converts LLMBar's instruction-following pairs into labelled criteria items
(JSONL), split dev/test by the SHA-256 of the instruction.

Source: https://github.com/princeton-nlp/LLMBar (commit
900616bff90b6c6c8e1681f7d079250637c55992): Dataset/LLMBar/Natural/dataset.json and
Dataset/LLMBar/Adversarial/Manual/dataset.json, each a list of
{"input", "output_1", "output_2", "label"}.
Paper: Zeng, Yu, Gao, Meng, Goyal, Chen, "Evaluating Large Language Models at
Evaluating Instruction Following", ICLR 2024, https://arxiv.org/abs/2310.07641.
Licence: MIT (LICENSE-LLMBar.txt beside the output).

What people did: the authors built each pair so that one output follows the
instruction precisely and the other does not (it drifts from, drops or changes
what was asked, however fluent), and checked every pair by hand; `label` names
the output that follows it. Natural pairs come from existing preference sets,
kept or edited only where the authors agreed the choice was objective; Manual
pairs were written by the authors to fool judges that favour polish.

Mapping: the criterion is one rule for every item, INSTRUCTION_RULE below; the
query is the instruction; each pair gives two items, the output `label` names
-> `meets`, the other -> `fails`. No passages. So every instruction is in the
set twice, once with each label, and both items are in the same half.

Selection: pairs whose instruction or either output is over 2,000 characters
are dropped; of the rest, every Manual pair and up to 35 Natural pairs per
half, in order of the SHA-256 of the instruction. Halves: dev if the first hex
digit of SHA-256(instruction) is below 8, else test.

    scripts/convert-llmbar.py /path/to/LLMBar tests/public_criteria/llmbar
"""
import hashlib, json, os, sys

MAX_CHARS = 2000
NATURAL_PER_HALF = 35
INSTRUCTION_RULE = ("Does what the question asks, precisely: follows every instruction in it, "
                    "without ignoring, adding to or changing what was asked.")


def sha(s):
    return hashlib.sha256(s.encode('utf-8')).hexdigest()


def main(src, out):
    halves = {'dev': [], 'test': []}
    counts = {}
    for subset, area, cap in (('Natural', 'llmbar-natural', NATURAL_PER_HALF),
                              ('Adversarial/Manual', 'llmbar-manual', None)):
        pairs = json.load(open(os.path.join(src, 'Dataset', 'LLMBar', subset, 'dataset.json'), encoding='utf-8'))
        kept = [p for p in pairs if max(len(p['input']), len(p['output_1']), len(p['output_2'])) <= MAX_CHARS]
        counts[subset] = (len(pairs), len(kept))
        kept.sort(key=lambda p: sha(p['input']))
        taken = {'dev': 0, 'test': 0}
        for p in kept:
            h = sha(p['input'])
            half = 'dev' if int(h[0], 16) < 8 else 'test'
            if cap is not None and taken[half] >= cap:
                continue
            taken[half] += 1
            for k in (1, 2):
                meets = p['label'] == k
                halves[half].append({
                    'id': f'llmbar-{h[:8]}-{k}',
                    'area': area,
                    'criteria': INSTRUCTION_RULE,
                    'query': p['input'],
                    'response': p[f'output_{k}'],
                    'label': 'meets' if meets else 'fails',
                    'note': f'LLMBar {subset} pair, output {k} of 2: '
                            + ('the output that follows the instruction' if meets else 'the output that does not follow it'),
                })
    for half, items in halves.items():
        d = os.path.join(out, half)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, 'llmbar.jsonl'), 'w', encoding='utf-8') as f:
            for it in items:
                f.write(json.dumps(it, ensure_ascii=False) + '\n')
        n_q = len(set(it['query'] for it in items))
        print(half, len(items), 'items,', n_q, 'instructions,',
              {a: sum(it['area'] == a for it in items) for a in ('llmbar-natural', 'llmbar-manual')})
    print('pairs (all, kept for length):', counts)


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
