module.exports = {
  ronda: {
    input: "../../openapi/openapi.json",
    output: { target: "generated/orval/ronda.ts", client: "fetch", mode: "single" },
  },
};
