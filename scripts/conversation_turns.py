"""What the `scripts/convert-*-turns.py` converters share: the labelled-turn
form they write (`tests/public_conversations/README.md`), the dev/test split,
and the choice of balanced subsets by hash. Standard library only.

A labelled turn is one JSON line:

    {"id": "mtrag-3f2a9c01de", "conversation": "…", "turn": 3, "kind": "follow-up",
     "history": [{"role": "user", "text": "…"}, {"role": "assistant", "text": "…"}],
     "query": "…", "passages": ["…"], "response": "…", "label": "supported",
     "labelled_by": "people", "note": "…"}

`history` is every turn before this one, oldest first (what the source holds;
the judge is shown a window of it); `query` the user's message of this turn;
`response` the assistant's answer being judged; `label` what people said,
mapped to what one ragaliq metric answers (the file's name says which metric).
`labelled_by` is "people" for a person's rating, "constructed" for a label
that follows from how the item was built (say, an earlier turn's answer
given to a later question), which the reports keep apart.
"""
import hashlib, json, os

KINDS = ('first', 'follow-up', 'clarification', 'unanswerable', 'partial', 'reply', 'opening')


def sha(text):
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def half_of(key):
    """The split: the first hex digit of the key's SHA-256 below 8 is dev.
    The key is the conversation's id where the source has conversations, so
    every turn of one conversation falls in the same half."""
    return 'dev' if int(sha(key)[0], 16) < 8 else 'test'


def by_hash(items, n, key=lambda it: it['id']):
    """The first `n` items in SHA-256 order of `key`: a subset chosen by the
    items' own text, never by a model's answer."""
    return sorted(items, key=lambda it: sha(key(it)))[:n]


def balanced(items, per_label, key=lambda it: it['id']):
    """At most `per_label` items of each label, each label's chosen by hash.
    The key must not be the one the split hashes, or every chosen item lands
    in one half."""
    out = []
    for label in sorted(set(it['label'] for it in items)):
        out += by_hash([it for it in items if it['label'] == label], per_label, key)
    return out


def roles_back(utterances):
    """A dialogue's utterances before the response, oldest first, with roles:
    the last one is the user's (the response answers it), and they alternate
    backwards from there."""
    n = len(utterances)
    return [{'role': 'user' if (n - 1 - i) % 2 == 0 else 'assistant', 'text': u.strip()}
            for i, u in enumerate(utterances)]


def write(out, metric, items, split_key):
    """Writes `out/{dev,test}/{metric}.jsonl`, items sorted by id; prints the
    counts per half, label and kind (the README's tables)."""
    halves = {'dev': [], 'test': []}
    for it in items:
        halves[half_of(split_key(it))].append(it)
    for half, part in halves.items():
        part.sort(key=lambda x: x['id'])
        os.makedirs(os.path.join(out, half), exist_ok=True)
        with open(os.path.join(out, half, f'{metric}.jsonl'), 'w', encoding='utf-8') as f:
            for x in part:
                f.write(json.dumps(x, ensure_ascii=False) + '\n')
        counts = {}
        for x in part:
            k = (x['kind'], x['label'] + ('*' if x.get('labelled_by') == 'constructed' else ''))
            counts[k] = counts.get(k, 0) + 1
        print(f'{metric} {half}: {len(part)}', ', '.join(f'{k}/{l} {n}' for (k, l), n in sorted(counts.items())))


def git_show(repo, path):
    """A file of a snapshot with no work tree (`/work/.mirror/...`) or of a
    checkout: the checkout's file if it exists, else `git show HEAD:path`."""
    full = os.path.join(repo, path)
    if os.path.exists(full):
        return open(full, encoding='utf-8').read()
    import subprocess
    return subprocess.run(['git', '-C', repo, 'show', f'HEAD:{path}'], check=True, capture_output=True).stdout.decode('utf-8')


def sibling(name):
    """Another script of this folder as a module (`convert-begin` -> its
    functions), so a with-history converter picks exactly the items the
    history-free one picked."""
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(name.replace('-', '_'), os.path.join(here, name + '.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
