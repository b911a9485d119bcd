import { describe, expect, it } from "vitest";
import { wantsEventStream } from "../../src/http/accept";

describe("wantsEventStream", () => {
  it("asks for the stream when text/event-stream is named with a quality above 0, at least JSON's", () => {
    expect(wantsEventStream("text/event-stream")).toBe(true);
    expect(wantsEventStream("Text/Event-Stream; charset=utf-8")).toBe(true);
    expect(wantsEventStream("text/event-stream, application/json")).toBe(true);
    expect(wantsEventStream("application/json;q=0.5, text/event-stream")).toBe(true);
    expect(wantsEventStream("text/event-stream;q=0.9, */*;q=0.1")).toBe(true);
  });

  it("does not when it is refused (q=0), preferred less than JSON, or only matched by a wildcard", () => {
    expect(wantsEventStream(undefined)).toBe(false);
    expect(wantsEventStream("text/event-stream;q=0, application/json")).toBe(false);
    expect(wantsEventStream("text/event-stream;q=0")).toBe(false);
    expect(wantsEventStream("text/event-stream;q=0.5, application/json")).toBe(false);
    expect(wantsEventStream("*/*")).toBe(false);
    expect(wantsEventStream("text/*")).toBe(false);
    expect(wantsEventStream("application/json")).toBe(false);
  });
});
