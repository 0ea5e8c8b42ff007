import { describe, expect, it } from 'vitest';
import { documentObjects, type DocumentContents } from './documents.js';

const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });

describe('documentObjects: the objects of one document, Lists expanded as kubectl does', () => {
  const table: [string, unknown, DocumentContents][] = [
    ['an empty document', null, { objects: [], problems: [] }],
    ['an object', cm('a'), { objects: [{ object: cm('a'), path: [] }], problems: [] }],
    [
      'a v1 List',
      { apiVersion: 'v1', kind: 'List', items: [cm('a'), cm('b')] },
      {
        objects: [
          { object: cm('a'), path: ['items', 0] },
          { object: cm('b'), path: ['items', 1] },
        ],
        problems: [],
      },
    ],
    ['a typed List', { apiVersion: 'v1', kind: 'ConfigMapList', items: [cm('a')] }, { objects: [{ object: cm('a'), path: ['items', 0] }], problems: [] }],
    [
      'a List in a List, in document order',
      { kind: 'List', items: [{ kind: 'List', items: [cm('a'), cm('b')] }, cm('c')] },
      {
        objects: [
          { object: cm('a'), path: ['items', 0, 'items', 0] },
          { object: cm('b'), path: ['items', 0, 'items', 1] },
          { object: cm('c'), path: ['items', 1] },
        ],
        problems: [],
      },
    ],
    ['a List without items', { kind: 'List' }, { objects: [], problems: [] }],
    [
      'a kind ending in List without items is an object',
      { kind: 'PlayList', songs: [] },
      { objects: [{ object: { kind: 'PlayList', songs: [] }, path: [] }], problems: [] },
    ],
    ['a List whose items are no list', { kind: 'List', items: 'a' }, { objects: [], problems: [{ path: ['items'], message: 'must be a list of objects' }] }],
    [
      'items that are no objects or have no kind',
      { kind: 'List', items: [null, 'a', { metadata: { name: 'x' } }, cm('a')] },
      {
        objects: [{ object: cm('a'), path: ['items', 3] }],
        problems: [0, 1, 2].map((i) => ({ path: ['items', i], message: 'not a Kubernetes object (no kind)' })),
      },
    ],
    ['a list', ['a', 'b'], { objects: [], problems: [{ path: [], message: 'not a Kubernetes object (no kind)' }] }],
    ['a string', 'web', { objects: [], problems: [{ path: [], message: 'not a Kubernetes object (no kind)' }] }],
  ];

  it.each(table)('%s', (_name, value, expected) => {
    expect(documentObjects(value)).toEqual(expected);
  });
});
