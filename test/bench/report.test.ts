import { describe, expect, it } from 'vitest';
import { type Row, figure, median, ratio, replaceSection, resultTable, withRatios } from '../../bench/lib/report.mjs';

const COLD = 'cold';
const WARM = 'warm';
const rows: Row[] = [
  { id: 'raw', group: COLD, label: 'raw', rate: 50_000, role: 'baseline' },
  { id: 'ours', group: COLD, label: 'ours', rate: 45_000, role: 'ours', spread: 1.25 },
  { id: 'slow', group: COLD, label: 'slow peer', rate: 20_000, role: 'peer' },
  { id: 'fast', group: COLD, label: 'fast peer', rate: 40_000, role: 'peer' },
  { id: 'ours-warm', group: WARM, label: 'ours', rate: 5_000_000, role: 'ours', baseline: 'raw' },
  { id: 'peer-warm', group: WARM, label: 'cached peer', rate: 500_000, role: 'peer', baseline: 'raw' },
];
const byId = (list: ReturnType<typeof withRatios>, id: string) => list.find((row) => row.id === id);

describe('withRatios', () => {
  it('divides each row by the baseline of its group', () => {
    const result = withRatios(rows);
    expect(byId(result, 'ours')?.xBaseline).toBeCloseTo(0.9);
    expect(byId(result, 'slow')?.xBaseline).toBeCloseTo(0.4);
    expect(byId(result, 'raw')?.xBaseline).toBe(1);
  });

  it('divides by the row a group names when it has no baseline of its own', () => {
    expect(byId(withRatios(rows), 'ours-warm')?.xBaseline).toBeCloseTo(100);
  });

  it("compares paygate-auth's rows with the fastest peer of the same group only", () => {
    const result = withRatios(rows);
    expect(byId(result, 'ours')).toMatchObject({ bestPeer: 'fast peer' });
    expect(byId(result, 'ours')?.xBestPeer).toBeCloseTo(1.125);
    expect(byId(result, 'ours-warm')).toMatchObject({ bestPeer: 'cached peer', xBestPeer: 10 });
  });

  it('takes the peer with the fewest as the best when fewer is better', () => {
    const result = withRatios(rows, { lowerIsBetter: true });
    expect(byId(result, 'ours')).toMatchObject({ bestPeer: 'slow peer', xBestPeer: 2.25 });
  });

  it('gives no best-peer ratio to the baseline, the peers, or a group without peers', () => {
    const result = withRatios([...rows, { id: 'http', group: 'http', label: 'auth', rate: 1, role: 'ours' }]);
    for (const id of ['raw', 'fast', 'peer-warm', 'http']) expect(byId(result, id)?.xBestPeer).toBeUndefined();
  });

  it('leaves the baseline ratio out where a group has no baseline', () => {
    expect(withRatios([{ id: 'a', group: 'g', label: 'a', rate: 1, role: 'ours' }])[0]?.xBaseline).toBeUndefined();
  });
});

describe('figure', () => {
  it('writes whole numbers with separators from 100 up and three significant digits below', () => {
    expect(figure(1_234_567.8)).toBe('1,234,568');
    expect(figure(100)).toBe('100');
    expect(figure(42.345)).toBe('42.3');
    expect(figure(undefined)).toBe('–');
  });
});

describe('ratio', () => {
  it('writes two decimals, or two significant digits under 0.1 so that a small ratio stays readable', () => {
    expect(ratio(1.125)).toBe('1.13×');
    expect(ratio(0.0669)).toBe('0.067×');
    expect(ratio(undefined)).toBe('–');
  });
});

describe('resultTable', () => {
  const table = resultTable(rows).split('\n');

  it('names each group on its first row only', () => {
    expect(table[2]).toMatch(/^\| cold \| raw \|/);
    expect(table[3]).toMatch(/^\| {2}\| ours \|/);
    expect(table[6]).toMatch(/^\| warm \| ours \|/);
  });

  it('prints rate, spread, ratio to the baseline and to the best peer on a row', () => {
    expect(table[3]).toBe('|  | ours | 45,000 | ±1.3 % | 0.90× | 1.13× fast peer |');
  });

  it('leaves the spread column out when no row has one', () => {
    const counts = resultTable(
      rows.map(({ spread: _, ...row }) => row),
      { unit: 'instructions' },
    );
    expect(counts.split('\n')[0]).toBe('| mode | case | instructions | × baseline | × best peer |');
  });
});

describe('replaceSection', () => {
  const document =
    '# Results\n\n<!-- bench:start -->\nold bench\n<!-- bench:end -->\n\n<!-- memory:start -->\nmemory\n<!-- memory:end -->\n';

  it('replaces only its own part', () => {
    const next = replaceSection(document, 'bench', 'new bench\n');
    expect(next).toContain('<!-- bench:start -->\nnew bench\n<!-- bench:end -->');
    expect(next).not.toContain('old bench');
    expect(next).toContain('<!-- memory:start -->\nmemory\n<!-- memory:end -->');
  });

  it('appends a part the document does not hold yet', () => {
    expect(replaceSection('# Results\n', 'instructions', 'counts')).toBe(
      '# Results\n\n<!-- instructions:start -->\ncounts\n<!-- instructions:end -->\n',
    );
  });
});

describe('median', () => {
  it('takes the middle round, the upper middle one of an even count, without reordering its input', () => {
    const rounds = [5, 1, 3];
    expect(median(rounds)).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(3);
    expect(rounds).toEqual([5, 1, 3]);
  });
});
