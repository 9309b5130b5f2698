#!/usr/bin/env python3
"""Converts MTRAG's human evaluation (IBM/mt-rag-benchmark) into labelled
conversation turns, split dev/test by conversation: see
tests/public_conversations/README.md ("MTRAG").

MTRAG (Katsis et al., TACL 2025, https://doi.org/10.1162/TACL.a.19): multi-turn
RAG conversations written by annotators over four corpora (Wikipedia, finance
forum answers, US government pages, IBM Cloud documentation). The file used,
`mtrag-human/evaluations/reference_subset_with_human_evaluations.json`, holds
159 turns of 20 conversations, each with every turn before it, its reference
passages, and three responses (the reference answer, Llama 3.1 405B's, GPT-4o's)
that two or three annotators rated on a 4-point scale (1 No, 2 Mostly no,
3 Mostly yes, 4 Yes) for faithfulness, appropriateness, completeness and
naturalness. Apache-2.0 (LICENSE-mtrag.txt; NOTICE-mtrag.txt).

Labels: a rating's median of 3 or more is yes, of 2 or less no; a median of
2.5 (two raters on either side) is left out.

- `faithfulness.jsonl`: every response of a turn with passages totalling at
  most 8,000 characters (the kit's judges hold 4,096 tokens); faithfulness yes
  is `supported`, no `not_supported`.
- `relevance.jsonl`: responses of answerable and partial turns; appropriateness
  ("the response provides an appropriate amount of useful information") yes is
  `relevant`, no `irrelevant`. Beside them, for every turn after the first, one
  *constructed* item: the assistant's previous answer given to this turn's
  question, `irrelevant`, `labelled_by: constructed` (it answers the question
  before; the reports keep these apart from people's labels). Relevance items
  carry no `passages` (the question does not read them; the turn's passages
  are in `faithfulness.jsonl`).
- `unanswerable.jsonl`: responses of the turns MTRAG marks unanswerable (no
  passage answers them; the file gives none); faithfulness yes is `declined`
  (it said it could not answer), no is `answered` (it invented). People rated
  every reply that answered unfaithful, and every reply that said it could not
  answer faithful but one (a reference reply, "The documents do not include
  information on how long to consider adoption…", rated 1: kept as they said).

Turn kinds: `first` (turn 1, answerable), `follow-up` and `clarification`
(MTRAG's multi-turn type, answerable), `partial`, `unanswerable`;
conversational turns ("Thank you!") are left out.

    scripts/convert-mtrag-turns.py /work/.mirror/IBM+mt-rag-benchmark/repo tests/public_conversations/mtrag
"""
import json, os, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conversation_turns import git_show, sha, write  # noqa: E402

NAME = 'mtrag'
FILE = 'mtrag-human/evaluations/reference_subset_with_human_evaluations.json'
ROLE = {'user': 'user', 'agent': 'assistant'}
MAX_PASSAGE_CHARS = 8000


def median(ev, metric):
    vals = [int(v['value']) for v in ev['annotations'].get(metric, {}).values()]
    return statistics.median(vals) if vals else None


def yes_no(m):
    if m is None or m == 2.5:
        return None
    return m >= 3


def kind(task):
    ans = task['Answerability'][0]
    if ans == 'UNANSWERABLE':
        return 'unanswerable'
    if ans == 'PARTIAL':
        return 'partial'
    if ans == 'CONVERSATIONAL':
        return None
    if task['Turn'] == '1':
        return 'first'
    return 'clarification' if 'Clarification' in task['Multi-Turn'] else 'follow-up'


def main(repo, out):
    data = json.loads(git_show(repo, FILE))
    docs = {d['document_id']: d['text'].strip() for d in data['documents']}
    tasks = {t['task_id']: t for t in data['tasks']}
    faith, rel, una = [], [], []
    left = {'conversational': 0, 'median 2.5': 0, 'faithfulness: passages over 8,000 characters': 0}
    for ev in data['evaluations']:
        t = tasks[ev['task_id']]
        k = kind(t)
        if k is None:
            left['conversational'] += 1
            continue
        conv, turn = t['task_id'].split('<::>')
        base = {
            'id': f"{NAME}-{sha(ev['task_id'] + '/' + ev['model_id'])[:10]}",
            'conversation': conv,
            'turn': int(turn),
            'kind': k,
            'history': [{'role': ROLE[m['speaker']], 'text': m['text'].strip()} for m in t['input'][:-1]],
            'query': t['input'][-1]['text'].strip(),
            'passages': [docs[c['document_id']] for c in t['contexts']],
            'response': ev['model_response'].strip(),
        }
        ratings = {m: median(ev, m) for m in ('faithfulness', 'appropriateness', 'completeness', 'naturalness')}
        note = (f"MTRAG {t['Collection'].split('-')[2]}, turn {turn}, {ev['model_id']}; medians: "
                + ', '.join(f'{m} {v:g}' for m, v in ratings.items() if v is not None))
        f = yes_no(ratings['faithfulness'])
        a = yes_no(ratings['appropriateness'])
        if k == 'unanswerable':
            if f is None:
                left['median 2.5'] += 1
                continue
            una.append({**base, 'label': 'declined' if f else 'answered', 'labelled_by': 'people', 'note': note})
            continue
        if sum(len(p) for p in base['passages']) > MAX_PASSAGE_CHARS:
            left['faithfulness: passages over 8,000 characters'] += 1
        elif base['passages']:
            if f is None:
                left['median 2.5'] += 1
            else:
                faith.append({**base, 'label': 'supported' if f else 'not_supported', 'labelled_by': 'people', 'note': note})
        if a is None:
            left['median 2.5'] += 1
        else:
            rel.append({**{k: v for k, v in base.items() if k != 'passages'},
                        'label': 'relevant' if a else 'irrelevant', 'labelled_by': 'people', 'note': note})
    # One constructed item per turn after the first: the previous answer.
    for t in data['tasks']:
        k = kind(t)
        if k in (None, 'unanswerable', 'first') or len(t['input']) < 3:
            continue
        conv, turn = t['task_id'].split('<::>')
        previous = t['input'][-2]
        if previous['speaker'] != 'agent':
            continue
        rel.append({
            'id': f"{NAME}-{sha(t['task_id'] + '/previous')[:10]}",
            'conversation': conv,
            'turn': int(turn),
            'kind': k,
            'history': [{'role': ROLE[m['speaker']], 'text': m['text'].strip()} for m in t['input'][:-1]],
            'query': t['input'][-1]['text'].strip(),
            'response': previous['text'].strip(),
            'label': 'irrelevant',
            'labelled_by': 'constructed',
            'note': f'MTRAG turn {turn}: the answer of turn {int(turn) - 1} given again (constructed)',
        })
    print('left out:', left)
    split = lambda it: it['conversation']
    write(out, 'faithfulness', faith, split)
    write(out, 'relevance', rel, split)
    write(out, 'unanswerable', una, split)


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
