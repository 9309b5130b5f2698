#!/usr/bin/env python3
"""The closest passage sentence as a second reading of a claim (issue 47
item 2: "the closest passage sentence ragaliq already finds"), measured
leave one source out beside the single question, under the rule and the
chooser of `scripts/band-signals.py` (each side of every other source's
dev half agreeing with people at least 0.9 of the time, the largest mean
coverage), with plain word overlap (no call) beside them.

For each claim of the dev halves of the six sources the shipped claims
band is chosen on, ragaliq itself finds the sentence
(`evidence::closest_sentence`, through `scripts/closest-sentences`), and
the kit's 1.5B is asked ragaliq's support question against that sentence
alone. A claim no sentence shares a content word with reads P 0 there (no
call). Its answers are cached in `bench/bands/closest-qwen15.jsonl`, in
the form of `bench/designs/*.jsonl` (design `sup:closest`); the whole
passage's answers are the caches `band-signals.py` reads.

    scripts/band-closest.py ask      # asks what the cache lacks (llama-server, 1.5B, port 8767)
    scripts/band-closest.py report   # the table of bench/bands/signals.md's closest-sentence part
"""
import importlib.util, json, os, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.join(ROOT, 'bench/bands/closest-qwen15.jsonl')
PORT = 8767
SOURCES = ['begin', 'dialfact', 'expertqa', 'faithbench', 'fm2', 'ours']


def module(name):
    spec = importlib.util.spec_from_file_location(name.replace('-', '_'), os.path.join(HERE, name + '.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


bs = module('band-signals')
bd, vd = bs.bd, bs.vd


def items():
    return [it for it in bd.load('claims') if it['half'] == 'dev' and it['source'] in SOURCES]


def found(its):
    """id -> (closest sentence or None, share of the claim's words in the passages), from ragaliq."""
    manifest = os.path.join(HERE, 'closest-sentences/Cargo.toml')
    target = os.path.join(ROOT, 'target/closest-sentences')
    stdin = ''.join(json.dumps({'id': it['id'], 'claim': it['claim'], 'passages': it['passages']}) + '\n' for it in its)
    out = subprocess.run(['cargo', 'run', '-q', '--release', '--manifest-path', manifest, '--target-dir', target],
                         input=stdin, capture_output=True, text=True, check=True).stdout
    rows = (json.loads(line) for line in out.splitlines())
    return {r['id']: (r['sentence'], r['overlap']) for r in rows}


def messages(it, sentence):
    return vd.DESIGNS['sup']({'passages': [sentence], 'claim': it['claim']})


def cached():
    out = {}
    if os.path.exists(CACHE):
        for line in open(CACHE, encoding='utf-8'):
            e = json.loads(line)
            out[e['key']] = e
    return out


def cmd_ask():
    its = items()
    near = found(its)
    cache = cached()
    out = open(CACHE, 'a', encoding='utf-8')
    done, started = 0, time.time()
    for it in its:
        sentence = near[it['id']][0]
        if sentence is None:
            continue
        msgs, mt = messages(it, sentence)
        k = vd.key('qwen15', msgs, mt)
        if k in cache:
            continue
        t0 = time.time()
        answer = vd.ask(PORT, msgs, mt)
        e = {'key': k, 'model': 'qwen15', 'design': 'sup:closest', 'ids': [it['id']],
             'secs': round(time.time() - t0, 3), **answer, 'load': round(os.getloadavg()[0], 2)}
        cache[k] = e
        out.write(json.dumps(e, ensure_ascii=False) + '\n')
        out.flush()
        done += 1
        if done % 50 == 0:
            print(f'{done} asked, {time.time() - started:.0f} s', file=sys.stderr, flush=True)
    print(f'{done} asked', file=sys.stderr)


def cmd_report():
    its = items()
    near = found(its)
    cache = cached()
    bs.SOURCES = SOURCES
    whole = bs.answers('qwen15', ('sup',))

    def closest(it):
        sentence = near[it['id']][0]
        if sentence is None:
            return 0.0
        e = cache.get(vd.key('qwen15', *messages(it, sentence)))
        return None if e is None else bd.p_yes(e)

    read = {it['id']: (whole.get(('sup', it['id'])), closest(it), near[it['id']][1]) for it in its}
    pool = [it for it in its if None not in read[it['id']]]
    asked = sum(near[it['id']][0] is not None for it in pool) / len(pool)
    signals = {
        "plain: the share of the claim's words in the passages (no call)": (0, lambda w, c, o: (o, o)),
        'one question, the whole passages (what ships)': (1, lambda w, c, o: (w, w)),
        'the closest sentence alone': (asked, lambda w, c, o: (c, c)),
        'both agree (the lower for yes, the higher for no)': (1 + asked, lambda w, c, o: (min(w, c), max(w, c))),
        'the mean of the two': (1 + asked, lambda w, c, o: ((w + c) / 2,) * 2),
        'yes from the whole passages, no from the closest sentence': (1 + asked, lambda w, c, o: (w, c)),
    }
    print(f'Claims, Qwen2.5-Coder-1.5B, dev halves of {", ".join(SOURCES)}: {len(pool)} of {len(its)} claims '
          f'with every reading; the closest sentence asked for {100 * asked:.0f}% of them (the rest share no '
          'content word with any sentence: read P 0, no call). Each source held out in turn, the band chosen '
          'on the others (rule `sides`).\n')
    print('| reading | calls / claim | median held-out coverage (FaithBench apart) | held-out coverage per source | sides under 0.9 held out (source: side n, accuracy) |')
    print('| --- | --- | --- | --- | --- |')
    for name, (calls, f) in signals.items():
        by = {s: [(bd.positive('claims', it), f(*read[it['id']])) for it in pool if it['source'] == s] for s in SOURCES}
        held = [(s, bs.figures(by[s], bs.choose([by[o] for o in SOURCES if o != s]))) for s in SOURCES]
        median = statistics.median(fg['coverage'] for s, fg in held if s != 'faithbench')
        per = ', '.join(f'{s} {100 * fg["coverage"]:.0f}%' for s, fg in held)
        bad = [f'{s}: {side} {fg[side + "_n"]}, {fg[side + "_acc"]:.3f}'
               for s, fg in held for side in ('yes', 'no')
               if fg[side + '_acc'] is not None and fg[side + '_acc'] < bd.ACC_MIN]
        print(f'| {name} | {calls:.2f} | {100 * median:.0f}% | {per} | {"; ".join(bad) or "none"} |')


if __name__ == '__main__':
    {'ask': cmd_ask, 'report': cmd_report}.get(sys.argv[1] if len(sys.argv) > 1 else '', lambda: sys.exit(__doc__))()
