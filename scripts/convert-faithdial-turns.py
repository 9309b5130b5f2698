#!/usr/bin/env python3
"""Converts FaithDial's data audit (McGill-NLP/FaithDial, `data-audit/`) into
labelled dialogue turns: see tests/public_conversations/README.md ("FaithDial").

The audit (Dziri, Milton, Yu, Zaiane, Reddy, "On the Origin of Hallucinations
in Conversational Models: Is it the Datasets or the Models?", NAACL 2022,
https://aclanthology.org/2022.naacl-main.387/; hosted in the FaithDial
repository) looked at knowledge-grounded dialogue data and models: 200 responses per file, the gold responses of Wizard of Wikipedia,
CMU-DoG and Topical-Chat and those of three models trained on each (GPT-2,
DoHA, CTRL), each with its knowledge snippet and the previous utterance
(`history`), labelled by people with BEGIN's categories: entailment (fully
supported by the knowledge), hallucination, partial hallucination, generic,
and uncooperative (supported by the knowledge, but not a cooperative reply to
the user: it ignores or dodges what they said). The repository is MIT
(LICENSE-faithdial.txt); the conversations and snippets come from Wizard of
Wikipedia and CMU-DoG (CC BY 4.0; NOTICE-faithdial.txt). The Topical-Chat
files (CDLA-Sharing 1.0) are left out.

- `faithfulness.jsonl`: entailment (with or without uncooperative) is
  `supported`; hallucination and partial hallucination `not_supported`;
  generic left out. 150 of each label, chosen by hash.
- `relevance.jsonl`: the entailed responses, cooperative (`relevant`) or
  uncooperative (`irrelevant`): every uncooperative one and as many
  cooperative ones, chosen by hash. The user's message is the question.
  Responses to an empty history (the opening turn) are left out here.

Responses that are also in BEGIN (the same authors annotated both, found by
their words: 31 here) are left out, so the two sources share none. Labels are read
lower-cased, split at commas, with the audit's typos read as meant
("entailmentt", "hallucinated", "entailment. uncooperative").

    scripts/convert-faithdial-turns.py /work/.mirror/McGill-NLP+FaithDial/repo tests/public_conversations/faithdial \\
        --begin /work/.mirror/google+BEGIN-dataset/repo
"""
import csv, io, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conversation_turns import balanced, git_show, sha, write  # noqa: E402

NAME = 'faithdial'
FILES = {  # (file, dataset, responder)
    'data-audit/gold/wow.csv': ('wow', 'gold'), 'data-audit/gold/cmu.csv': ('cmu', 'gold'),
    'data-audit/GPT2/gpt2_processed_wow.csv': ('wow', 'gpt2'), 'data-audit/GPT2/gpt2_processed_cmu.csv': ('cmu', 'gpt2'),
    'data-audit/DoHA/doha_processed_wow.csv': ('wow', 'doha'), 'data-audit/DoHA/doha_processed_cmu.csv': ('cmu', 'doha'),
    'data-audit/CTRL/ctrl_processed_wow.csv': ('wow', 'ctrl'), 'data-audit/CTRL/ctrl_processed_cmu.csv': ('cmu', 'ctrl'),
}
BEGIN_FILES = ['wow/begin_dev_wow.tsv', 'wow/begin_test_wow.tsv', 'cmu-dog/begin_dev_cmu.tsv', 'topicalchat/begin_dev_tc.tsv']
TYPOS = {'entailmentt': 'entailment', 'hallucinated': 'hallucination', 'partial hallucination': 'partial'}
PER_LABEL = 150


def words(s):
    return ' '.join(s.lower().split())


def categories(label):
    out = set()
    for part in re.split(r'[,.]', label.lower()):
        part = part.strip()
        if part:
            out.add(TYPOS.get(part, part))
    return out


def main(repo, out, begin_repo):
    in_begin = set()
    for path in BEGIN_FILES:
        for r in csv.DictReader(io.StringIO(git_show(begin_repo, path), newline=''), delimiter='\t', quoting=csv.QUOTE_NONE):
            in_begin.add(words(r['response']))
    faith, rel = [], []
    left = {'in BEGIN': 0, 'generic or unlabelled': 0}
    for path, (dataset, responder) in FILES.items():
        rows = list(csv.reader(io.StringIO(git_show(repo, path), newline='')))
        for n, row in enumerate(rows[1:], start=2):
            knowledge, message, response, label = (x.strip() for x in row[:4])
            if words(response) in in_begin:
                left['in BEGIN'] += 1
                continue
            cats = categories(label)
            if cats & {'hallucination', 'partial'}:
                faithful = False
            elif 'entailment' in cats or cats == {'uncooperative'}:
                faithful = True  # the gold files write uncooperative alone; it is entailed and uncooperative
            else:
                left['generic or unlabelled'] += 1
                continue
            base = {
                'id': f"{NAME}-{sha(path + '/' + str(n))[:10]}",
                'conversation': f"{NAME}-{sha(path + '/' + str(n))[:10]}",
                'turn': None,
                'kind': 'reply' if message else 'opening',
                'history': [],
                'query': message,
                'passages': [knowledge],
                'response': response,
                'labelled_by': 'people',
                'note': f'FaithDial audit {dataset} ({responder}, {path} line {n}): {label}',
            }
            faith.append({**base, 'label': 'supported' if faithful else 'not_supported'})
            if faithful and message:
                rel.append({**base, 'label': 'irrelevant' if 'uncooperative' in cats else 'relevant'})
    print('left out:', left)
    # Chosen by the hash of their text (the split hashes the id: the two must differ).
    text = lambda it: it['passages'][0] + '\t' + it['query'] + '\t' + it['response']
    faith = balanced(faith, PER_LABEL, text)
    uncooperative = sum(it['label'] == 'irrelevant' for it in rel)
    rel = balanced(rel, uncooperative, text)
    split = lambda it: it['id']
    write(out, 'faithfulness', faith, split)
    write(out, 'relevance', rel, split)


if __name__ == '__main__':
    args = sys.argv[1:]
    if len(args) != 4 or args[2] != '--begin':
        sys.exit(__doc__)
    main(args[0], args[1], args[3])
