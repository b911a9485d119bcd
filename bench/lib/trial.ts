// One scored comparison of the measuring protocol. Kept apart from protocol.ts (which reaches the datasets
// and the file system) so the rate helpers and their tests need nothing but these types.
export type Kind = "genuine" | "skilled" | "random";

export interface Trial {
  writer: string;
  kind: Kind;
  score: number;
}
