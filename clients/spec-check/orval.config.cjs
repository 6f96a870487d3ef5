module.exports = {
  ronda: {
    input: "../../openapi/openapi.json",
    // headers: true, so header parameters (If-Match, Idempotency-Key) are typed arguments
    output: { target: "generated/orval/ronda.ts", client: "fetch", mode: "single", headers: true },
  },
};
