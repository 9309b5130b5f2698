#!/usr/bin/env python3
"""Converts MTRAG-UN's generation tasks (IBM/mt-rag-benchmark, `mtragun-human/`)
into labelled conversation turns, split dev/test by conversation: see
tests/public_conversations/README.md ("MTRAG-UN").

MTRAG-UN (Rosenthal et al., ACL Findings 2026, https://arxiv.org/abs/2602.23184):
507 conversations (the Banking and Telco ones are not released yet), each with
one chosen turn, favouring the hard ones: unanswerable from the passages,
underspecified, not standalone, a clarification. Each task holds every turn
before it, the reference passages and the reference response, written or
repaired and then reviewed by the annotators. Apache-2.0 (LICENSE-mtrag.txt,
NOTICE-mtrag.txt).

There are no ratings of several responses here, only the reference reply the
annotators stand behind. So:

- `unanswerable.jsonl`: the reference reply of every turn MTRAG-UN marks
  unanswerable is `declined` (the annotators wrote that the passages do not say);
  beside them as many reference replies of answerable turns, chosen by hash,
  `answered`. Both `labelled_by: people`. This measures the check's question
  (does the reply say it cannot answer, or does it answer?) on replies people
  wrote of both kinds. Partial and underspecified turns are left out (their
  replies do both, or ask back).
- `relevance.jsonl`: the reference replies of answerable turns, `relevant`
  (`labelled_by: people`), each beside a *constructed* item on the same turn:
  the assistant's previous answer given again, `irrelevant`
  (`labelled_by: constructed`). 150 turns, chosen by hash of the task id.
  Relevance items carry no `passages` (the question does not read them).

Conversations that open with the same user message as one of MTRAG's 20 rated
conversations are left out (5), so the two sources share none. Items whose
passages total over 8,000 characters are left out (the kit's judges hold
4,096 tokens).

    scripts/convert-mtragun-turns.py /work/.mirror/IBM+mt-rag-benchmark/repo tests/public_conversations/mtrag-un
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conversation_turns import by_hash, git_show, sha, write  # noqa: E402

NAME = 'mtrag-un'
FILE = 'mtragun-human/generation_tasks/reference.jsonl'
MTRAG = 'mtrag-human/evaluations/reference_subset_with_human_evaluations.json'
ROLE = {'user': 'user', 'agent': 'assistant'}
MAX_PASSAGE_CHARS = 8000
RELEVANCE_TURNS = 150


def kind(r):
    ans = r['answerability'][0]
    if ans == 'UNANSWERABLE':
        return 'unanswerable'
    if ans in ('PARTIAL', 'UNDERSPECIFIED'):
        return None
    if r['turn'] == '1':
        return 'first'
    return 'clarification' if 'Clarification' in r['Multi-Turn'] else 'follow-up'


def passage(c):
    text = c['text'].strip()
    title = (c.get('title') or '').strip()
    return f'{title}\n{text}' if title and not text.startswith(title) else text


def main(repo, out):
    rows = [json.loads(l) for l in git_show(repo, FILE).splitlines() if l.strip()]
    rated = json.loads(git_show(repo, MTRAG))
    openers = {t['input'][0]['text'].strip().lower() for t in rated['tasks']}
    left = {'shares its opening with MTRAG': 0, 'partial or underspecified': 0, 'passages over 8,000 characters': 0}
    items = []
    for r in rows:
        if r['input'][0]['text'].strip().lower() in openers:
            left['shares its opening with MTRAG'] += 1
            continue
        k = kind(r)
        if k is None:
            left['partial or underspecified'] += 1
            continue
        passages = [passage(c) for c in r['contexts']]
        if sum(len(p) for p in passages) > MAX_PASSAGE_CHARS:
            left['passages over 8,000 characters'] += 1
            continue
        items.append((r, k, passages))
    print('left out:', left)

    def turn(r, k, passages, response, label, by, suffix, note):
        return {
            'id': f"{NAME}-{sha(r['task_id'] + suffix)[:10]}",
            'conversation': r['conversation_id'],
            'turn': int(r['turn']),
            'kind': k,
            'history': [{'role': ROLE[m['speaker']], 'text': m['text'].strip()} for m in r['input'][:-1]],
            'query': r['input'][-1]['text'].strip(),
            'passages': passages,
            'response': response.strip(),
            'label': label,
            'labelled_by': by,
            'note': note,
        }

    def gold_note(r):
        author = r['targets'][0]['metadata']['author_type']
        return (f"MTRAG-UN {r['Collection']}, turn {r['turn']}, {r['answerability'][0].lower()}; "
                f"reference reply ({'written by an annotator' if author == 'human' else 'a model reply the annotators repaired and reviewed'})")

    unanswerable = [(r, k, p) for r, k, p in items if k == 'unanswerable']
    answerable = [(r, k, p) for r, k, p in items if k != 'unanswerable']
    una = [turn(r, k, p, r['targets'][0]['text'], 'declined', 'people', '', gold_note(r)) for r, k, p in unanswerable]
    chosen = by_hash(answerable, len(unanswerable), key=lambda x: x[0]['task_id'])
    una += [turn(r, k, p, r['targets'][0]['text'], 'answered', 'people', '', gold_note(r)) for r, k, p in chosen]

    rel = []
    no_passages = lambda it: {k: v for k, v in it.items() if k != 'passages'}
    for r, k, p in by_hash(answerable, RELEVANCE_TURNS, key=lambda x: x[0]['task_id'] + '/relevance'):
        rel.append(no_passages(turn(r, k, p, r['targets'][0]['text'], 'relevant', 'people', '', gold_note(r))))
        prev = r['input'][-2] if len(r['input']) >= 3 else None
        if prev and prev['speaker'] == 'agent' and prev['text'].strip() != r['targets'][0]['text'].strip():
            rel.append(no_passages(turn(r, k, p, prev['text'], 'irrelevant', 'constructed', '/previous',
                                        f"MTRAG-UN turn {r['turn']}: the answer of the turn before given again (constructed)")))
    split = lambda it: it['conversation']
    write(out, 'relevance', rel, split)
    write(out, 'unanswerable', una, split)


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
