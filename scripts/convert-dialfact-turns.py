#!/usr/bin/env python3
"""DialFact's claims with their dialogue history restored: the same items as
`scripts/convert-dialfact.py` (tests/public_claims/dialfact, same ids, same
halves), each with the conversation before the response (`context` in
`scripts/testsmall.jsonl`, oldest first). See tests/public_conversations/README.md
("DialFact").

The last utterance of the context is the user's message the response answers
(`query`); the ones before it alternate assistant and user going back
(`history`). Kinds: `first` when the user's message is all there is before the
response, `follow-up` when earlier turns are there, `opening` when the
context is empty.

    scripts/convert-dialfact-turns.py /work/.mirror/salesforce+DialFact/repo tests/public_conversations/dialfact
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conversation_turns import git_show, roles_back, write  # noqa: E402
from conversation_turns import sibling  # noqa: E402

dialfact = sibling('convert-dialfact')


def main(repo, out):
    rs = [json.loads(l) for l in git_show(repo, dialfact.FILE).splitlines() if l.strip()]
    factual = [r for r in rs if r['type_label'] == 'factual']
    usable = [r for r in factual if sum(len(p) for p in dialfact.passages(r)) <= dialfact.MAX_PASSAGE_CHARS]
    items, seen = [], set()
    # convert-dialfact.py's choice, word for word
    for label in dialfact.LABELS:
        for r in sorted((r for r in usable if r['response_label'] == label), key=dialfact.key)[:dialfact.PER_LABEL]:
            k = dialfact.key(r)
            if k in seen:
                continue
            seen.add(k)
            turns = roles_back([u for u in r['context']])
            items.append({
                'id': f'{dialfact.NAME}-{k[:10]}',
                'conversation': r['context_id'],
                'turn': (len(turns) + 1) // 2 or None,
                'kind': 'opening' if not turns else ('first' if len(turns) == 1 else 'follow-up'),
                'history': turns[:-1],
                'query': turns[-1]['text'] if turns else '',
                'passages': dialfact.passages(r),
                'response': r['response'].strip(),
                'label': dialfact.LABELS[label],
                'labelled_by': 'people',
                'note': f"DialFact test sample {r['id']} ({r['data_type']} response): {label}",
            })
    write(out, 'faithfulness', items, lambda it: it['id'])


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
