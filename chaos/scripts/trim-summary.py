#!/usr/bin/env python3
"""Trims a chaos summary written before summaries were compact (2026-11-27) to what
ChaosSummary writes now: counts of every leaderless interval, by cause, and at most 500
of them listed one by one (every late one, then those closest to their bound).

Usage: trim-summary.py SUMMARY.json [SOURCE] (SOURCE, e.g. a commit, is named in the
"leaderlessListed" note)."""
import collections
import json
import sys

LISTED = 500

path = sys.argv[1]
source = sys.argv[2] if len(sys.argv) > 2 else None
with open(path) as f:
    summary = json.load(f)
gaps = summary['leaderless']
if 'leaderlessIntervals' in summary:
    sys.exit(path + ' is already trimmed')


def share(gap):
    return gap['millis'] / max(gap['boundMillis'], 1e-6)


late = [g for g in gaps if not g['withinBound']]
closest = sorted((g for g in gaps if g['withinBound']), key=share, reverse=True)[:max(0, LISTED - len(late))]
kept = set(map(id, late + closest))
listed = [g for g in gaps if id(g) in kept]
by_cause = collections.defaultdict(list)
for gap in gaps:
    by_cause[gap['cause']].append(gap)
hand_overs = [g for g in gaps if 'handOverBoundMillis' in g]
trimmed = {}
for key, value in summary.items():
    if key != 'leaderless':
        trimmed[key] = value
        continue
    trimmed['leaderlessIntervals'] = len(gaps)
    trimmed['leaderlessPastBound'] = len(late)
    trimmed['leaderlessBegunByHandOver'] = len(hand_overs)
    trimmed['leaderlessPastHandOverBound'] = sum(1 for g in hand_overs if g['millis'] > g['handOverBoundMillis'])
    trimmed['leaderlessByCause'] = {
        cause: {'count': len(of_cause),
                'pastBound': sum(1 for g in of_cause if not g['withinBound']),
                'longestMillis': max(g['millis'] for g in of_cause),
                'largestShareOfBound': round(max(share(g) for g in of_cause), 3)}
        for cause, of_cause in sorted(by_cause.items())}
    note = 'all' if len(listed) == len(gaps) else \
        'the %d of %d closest to their bound, every one past it included' % (len(listed), len(gaps))
    if source and len(listed) < len(gaps):
        note += ' (trimmed; every interval is in ' + source + ')'
    trimmed['leaderlessListed'] = note
    trimmed['leaderless'] = listed
with open(path, 'w') as f:
    json.dump(trimmed, f, indent=2)
    f.write('\n')
print('%s: %d intervals, %d late, %d listed, %d begun by a hand-over (%d past its bound)' % (
    path, len(gaps), len(late), len(listed), len(hand_overs), trimmed['leaderlessPastHandOverBound']))
