#!/usr/bin/env python3
"""BEGIN's claims with the dialogue turn restored: the same items as
`scripts/convert-begin.py` (tests/public_claims/begin, same ids, same halves),
each with the user's message the response answered (BEGIN's `message` column,
"the previous turn in the dialogue history"). See
tests/public_conversations/README.md ("BEGIN").

BEGIN holds only that one message, not the turns before it, so every item is
of kind `reply` (`opening` where the message is empty): what it measures is the
judge given the user's message against the judge given none.

    scripts/convert-begin-turns.py /work/.mirror/google+BEGIN-dataset/repo tests/public_conversations/begin
"""
import csv, io, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conversation_turns import git_show, sibling, write  # noqa: E402

begin = sibling('convert-begin')


def rows(repo, path):
    return list(csv.DictReader(io.StringIO(git_show(repo, path), newline=''), delimiter='\t', quoting=csv.QUOTE_NONE))


def main(repo, out):
    wow = rows(repo, 'wow/begin_dev_wow.tsv') + rows(repo, 'wow/begin_test_wow.tsv')
    cmu = rows(repo, 'cmu-dog/begin_dev_cmu.tsv')
    # convert-begin.py's choice, word for word
    taken = [('wow', r) for r in begin.pick(wow, 'Fully attributable', 200) + begin.pick(wow, 'Not fully attributable', 200)]
    full = begin.pick(cmu, 'Fully attributable', 150)
    taken += [('cmu', r) for r in full + begin.pick(cmu, 'Not fully attributable', 150 - len(full))]
    items, seen = [], set()
    for source, r in taken:
        k = begin.key(r)
        if k in seen:
            continue
        seen.add(k)
        message = r['message'].strip()
        items.append({
            'id': f'{source}-{k[:10]}',
            'conversation': f'{source}-{k[:10]}',
            'turn': None,
            'kind': 'reply' if message else 'opening',
            'history': [],
            'query': message,
            'passages': [r['knowledge'].strip()],
            'response': r['response'].strip(),
            'label': 'supported' if r['begin_label'] == 'Fully attributable' else 'not_supported',
            'labelled_by': 'people',
            'note': f"BEGIN {source} ({r['model_name']}): {r['begin_label']}",
        })
    write(out, 'faithfulness', items, lambda it: it['id'])


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
