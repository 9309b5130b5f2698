#!/usr/bin/env python3
"""Converts MTRAG's and MTRAG-UN's reference passages (IBM/mt-rag-benchmark)
into labelled passages of conversation turns, for the passage-relevance
question (context precision) asked with and without the conversation before
the turn: see tests/public_conversations/README.md ("Passages of a turn").

Each item is one passage of one turn: `passages` holds that passage alone,
`label` says whether it helps answer the turn's question.

- `relevant` (`labelled_by: people`): a passage the annotators chose as a
  reference passage of the turn (MTRAG's annotators retrieved passages turn by
  turn and kept the relevant ones; the qrels list them).
- `irrelevant` (`labelled_by: constructed`), MTRAG: a reference passage of
  *another turn of the same conversation* that the qrels do not list for this
  one: on the conversation's topic, the hard case where what was said before
  can mislead a judge or help it. At most two a turn, chosen by hash.
- `irrelevant` (`labelled_by: constructed`), MTRAG-UN (one turn a
  conversation, so no sibling turns): a reference passage of another
  conversation of the same collection, chosen by hash: off the turn's topic.

MTRAG: the 20 rated conversations (`reference_subset_with_human_evaluations.json`,
every turn, the passage texts in it), qrels from
`mtrag-human/retrieval_tasks/<collection>/qrels/dev.tsv`. MTRAG-UN: its
generation tasks, with the turns `convert-mtragun-turns.py` keeps (the five
conversations that open as one of MTRAG's are left out, so the sources share
none), 150 turns chosen by hash. Unanswerable and conversational turns have
no reference passage and are left out; partial turns are kept (their passages
were chosen too). Passages over 3,000 characters are left out. Split dev/test
by conversation, as every converter of this folder. Apache-2.0
(LICENSE-mtrag.txt, NOTICE-mtrag.txt).

    scripts/convert-mtrag-passages.py /work/.mirror/IBM+mt-rag-benchmark/repo tests/public_conversations
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conversation_turns import by_hash, git_show, sha, sibling, write  # noqa: E402

mt = sibling('convert-mtrag-turns')
un = sibling('convert-mtragun-turns')
ROLE = {'user': 'user', 'agent': 'assistant'}
MAX_PASSAGE_CHARS = 3000
NEGATIVES_PER_TURN = 2
UN_TURNS = 150
COLLECTIONS = ('clapnq', 'cloud', 'fiqa', 'govt')


def qrels(repo):
    """{task id: set of relevant corpus ids} over MTRAG's four collections."""
    out = {}
    for c in COLLECTIONS:
        for line in git_show(repo, f'mtrag-human/retrieval_tasks/{c}/qrels/dev.tsv').splitlines()[1:]:
            q, doc, score = line.split('\t')
            if int(score) > 0:
                out.setdefault(q, set()).add(doc)
    return out


def item(source, task_id, conv, turn, kind, inputs, text, label, by, suffix, note):
    return {
        'id': f"{source}-{sha(task_id + '/' + suffix)[:10]}",
        'conversation': conv,
        'turn': int(turn),
        'kind': kind,
        'history': [{'role': ROLE[m['speaker']], 'text': m['text'].strip()} for m in inputs[:-1]],
        'query': inputs[-1]['text'].strip(),
        'passages': [text],
        'response': '',
        'label': label,
        'labelled_by': by,
        'note': note,
    }


def mtrag(repo):
    data = json.loads(git_show(repo, mt.FILE))
    docs = {d['document_id']: d['text'].strip() for d in data['documents']}
    rel = qrels(repo)
    by_conv = {}
    for t in data['tasks']:
        by_conv.setdefault(t['task_id'].split('<::>')[0], []).append(t)
    items, left = [], {'no reference passage': 0, 'passage over 3,000 characters': 0}
    for conv, tasks in sorted(by_conv.items()):
        pool = {c['document_id'] for t in tasks for c in t['contexts']}
        for t in tasks:
            k = mt.kind(t)
            ids = [c['document_id'] for c in t['contexts']]
            if k in (None, 'unanswerable') or not ids:
                left['no reference passage'] += 1
                continue
            turn = t['task_id'].split('<::>')[1]
            collection = t['Collection'].split('-')[2]
            relevant = rel.get(t['task_id'], set()) | set(ids)
            for d in ids:
                if len(docs[d]) > MAX_PASSAGE_CHARS:
                    left['passage over 3,000 characters'] += 1
                    continue
                items.append(item('mtrag', t['task_id'], conv, turn, k, t['input'], docs[d], 'relevant', 'people', d,
                                  f'MTRAG {collection}, turn {turn}: a reference passage of this turn ({d})'))
            others = [d for d in sorted(pool - relevant) if len(docs[d]) <= MAX_PASSAGE_CHARS]
            for d in by_hash(others, NEGATIVES_PER_TURN, key=lambda d: t['task_id'] + '/' + d):
                items.append(item('mtrag', t['task_id'], conv, turn, k, t['input'], docs[d], 'irrelevant', 'constructed', d,
                                  f'MTRAG {collection}, turn {turn}: a reference passage of another turn of this '
                                  f'conversation, not in this turn\'s qrels ({d}; constructed)'))
    print('mtrag left out:', left)
    return items


def mtrag_un(repo):
    rows = [json.loads(l) for l in git_show(repo, un.FILE).splitlines() if l.strip()]
    rated = json.loads(git_show(repo, un.MTRAG))
    openers = {t['input'][0]['text'].strip().lower() for t in rated['tasks']}
    kept = []
    for r in rows:
        if r['input'][0]['text'].strip().lower() in openers:
            continue
        k = un.kind(r)
        passages = [un.passage(c) for c in r['contexts'] if len(un.passage(c)) <= MAX_PASSAGE_CHARS]
        if k in (None, 'unanswerable') or not passages:
            continue
        kept.append((r, k, passages))
    items = []
    for r, k, passages in by_hash(kept, UN_TURNS, key=lambda x: x[0]['task_id'] + '/passages'):
        for i, p in enumerate(passages):
            items.append(item('mtrag-un', r['task_id'], r['conversation_id'], r['turn'], k, r['input'], p, 'relevant',
                              'people', str(i), f"MTRAG-UN {r['Collection']}, turn {r['turn']}: reference passage {i + 1}"))
        # Another conversation of the same collection, chosen by hash, its
        # first passage that is none of this turn's.
        others = [(o, op) for o, _, op in kept if o['Collection'] == r['Collection'] and o['conversation_id'] != r['conversation_id']]
        for o, op in by_hash(others, 1, key=lambda x: r['task_id'] + '/' + x[0]['task_id']):
            p = next((x for x in op if x not in passages), None)
            if p is not None:
                items.append(item('mtrag-un', r['task_id'], r['conversation_id'], r['turn'], k, r['input'], p,
                                  'irrelevant', 'constructed', 'other:' + o['task_id'],
                                  f"MTRAG-UN {r['Collection']}, turn {r['turn']}: a reference passage of another "
                                  f"conversation ({o['task_id']}; constructed)"))
    return items


def main(repo, out):
    split = lambda it: it['conversation']
    write(os.path.join(out, 'mtrag'), 'passages', mtrag(repo), split)
    write(os.path.join(out, 'mtrag-un'), 'passages', mtrag_un(repo), split)


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
