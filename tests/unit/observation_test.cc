// Unit tests for the trace reader (engine/check/observation.h): what
// ParseTrace accepts, that ObservationToJson writes what it reads, and how
// a fault event reads, writes and is drawn.
#include <string>

#include "absl/strings/match.h"
#include "engine/check/observation.h"
#include "engine/check/trace_validator.h"
#include "engine/harness/counterexample.h"
#include "gtest/gtest.h"

namespace dualswarm::check {
namespace {

TEST(Observation, WrittenTraceReadsBackTheSame) {
  const char* text =
      "# a comment\n"
      "{\"label\":1,\"conn\":2,\"dir\":\"sent\",\"msg\":{\"op\":\"get\"},\"t\":0}\n"
      "\n"
      "{\"label\":2,\"conn\":2,\"dir\":\"received\",\"msg\":[1,\"x\",null]}\n"
      "{\"event\":\"timeout\",\"label\":1,\"conn\":2,\"t\":7}\n"
      "{\"event\":\"closed\",\"conn\":2}\n"
      "{\"event\":\"fault\",\"fault\":\"partition\",\"groups\":[[0],[1,2]],\"t\":9}\n";
  auto trace = ParseTrace("t.jsonl", text);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->size(), 5u);
  EXPECT_EQ(ObservationToJson((*trace)[4]), R"({"event":"fault","fault":"partition","groups":[[0],[1,2]],"t":9})");
  std::string written;
  for (const auto& o : *trace) written += ObservationToJson(o) + "\n";
  auto again = ParseTrace("w.jsonl", written);
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ(again->size(), trace->size());
  for (size_t i = 0; i < trace->size(); ++i) {
    EXPECT_EQ((*again)[i].kind, (*trace)[i].kind);
    EXPECT_EQ((*again)[i].label, (*trace)[i].label);
    EXPECT_EQ((*again)[i].conn, (*trace)[i].conn);
    EXPECT_EQ((*again)[i].msg, (*trace)[i].msg);
    EXPECT_EQ((*again)[i].t, (*trace)[i].t);
  }
}

// Found by tests/fuzz/fuzz_trace: a negative "t" was accepted, then
// ObservationToJson dropped it (it writes t only when >= 0, -1 meaning
// absent), so the trace did not read back the same.
TEST(Observation, NegativeTimeIsRefused) {
  auto trace = ParseTrace("t.jsonl", "{\"label\":1,\"conn\":0,\"dir\":\"sent\",\"msg\":{},\"t\":-5}\n");
  ASSERT_FALSE(trace.ok());
  EXPECT_TRUE(absl::StrContains(trace.status().message(), "t.jsonl:1:1: field \"t\" must not be negative"))
      << trace.status();
  EXPECT_FALSE(ParseObservationLine("{\"event\":\"closed\",\"conn\":0,\"t\":-1}").ok());
}

// A fault needs its name; it has no connection.
// Labels stay below 2^62: above it the checker numbers an intermediary's
// origin-side inputs, so a trace cannot make the two sides' labels meet.
TEST(Observation, LabelsAreBelowTwoToThe62) {
  auto top = ParseObservationLine(R"({"label":4611686018427387903,"conn":0,"dir":"sent","msg":{}})");
  EXPECT_TRUE(top.ok()) << top.status();
  auto over = ParseObservationLine(R"({"label":4611686018427387905,"conn":0,"dir":"sent","msg":{}})");
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("below 2^62"), std::string::npos) << over.status();
}

TEST(Observation, FaultsNeedAName) {
  auto pause = ParseObservationLine(R"({"event":"fault","fault":"pause","node":1})");
  ASSERT_TRUE(pause.ok()) << pause.status();
  EXPECT_EQ(pause->kind, Observation::Kind::kFault);
  EXPECT_STREQ(ObservationKindName(pause->kind), "fault");
  for (const char* bad :
       {R"({"event":"fault"})", R"({"event":"fault","fault":""})", R"({"event":"fault","fault":3})"}) {
    auto o = ParseObservationLine(bad);
    ASSERT_FALSE(o.ok()) << bad;
    EXPECT_TRUE(absl::StrContains(o.status().message(), "a fault event needs \"fault\"")) << o.status();
  }
  auto unknown = ParseObservationLine(R"({"event":"reset","conn":0})");
  EXPECT_TRUE(absl::StrContains(unknown.status().message(), "(expected closed, timeout or fault)")) << unknown.status();
}

// An intermediary's trace (docs/trace-format.md: the origin side): the
// tester receives the SUT's request on an origin connection (odd label)
// and sends the answer (label + 1); lines without "side" are the clients'
// and are written as before.
TEST(Observation, TheOriginSideReadsAndWritesBack) {
  const char* text =
      "{\"label\":1,\"conn\":0,\"dir\":\"sent\",\"msg\":{\"id\":\"a\"}}\n"
      "{\"side\":\"origin\",\"label\":1,\"conn\":0,\"dir\":\"received\",\"msg\":{\"id\":\"a\"}}\n"
      "{\"side\":\"origin\",\"label\":2,\"conn\":0,\"dir\":\"sent\",\"msg\":{\"v\":1}}\n"
      "{\"event\":\"closed\",\"conn\":0,\"side\":\"origin\"}\n"
      "{\"side\":\"client\",\"label\":2,\"conn\":0,\"dir\":\"received\",\"msg\":{\"v\":1}}\n";
  auto trace = ParseTrace("t.jsonl", text);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->size(), 5u);
  EXPECT_EQ((*trace)[0].side, Side::kClient);
  EXPECT_EQ((*trace)[1].side, Side::kOrigin);
  EXPECT_EQ((*trace)[3].side, Side::kOrigin);
  EXPECT_EQ((*trace)[4].side, Side::kClient);
  EXPECT_EQ(ObservationToJson((*trace)[1]),
            R"({"side":"origin","label":1,"conn":0,"dir":"received","msg":{"id":"a"}})");
  EXPECT_EQ(ObservationToJson((*trace)[3]), R"({"event":"closed","side":"origin","conn":0})");
  EXPECT_EQ(ObservationToJson((*trace)[4]), R"({"label":2,"conn":0,"dir":"received","msg":{"v":1}})");
  TraceValidator v;
  std::vector<int> channels;
  for (const Observation& o : *trace) {
    auto ch = v.Accept(o);
    ASSERT_TRUE(ch.ok()) << ch.status();
    channels.push_back(*ch);
  }
  // Connection 0 of each side is a channel of its own.
  EXPECT_EQ(channels, (std::vector<int>{0, 1, 1, 1, 0}));
}

TEST(Observation, TheOriginSideHasItsOwnRules) {
  struct Case {
    const char* line;
    const char* error;
  } cases[] = {
      {R"({"side":"origin","label":2,"conn":0,"dir":"received","msg":{}})",
       "a request received on the origin side must have an odd label, got 2"},
      {R"({"side":"origin","label":1,"conn":0,"dir":"sent","msg":{}})",
       "an answer sent on the origin side must have an even label, got 1"},
      {R"({"side":"origin","event":"timeout","label":1,"conn":0})", "a timeout is on the clients' side only"},
      {R"({"side":"origin","event":"fault","fault":"kill"})", "a fault event has no side"},
      {R"({"side":"proxy","label":1,"conn":0,"dir":"sent","msg":{}})",
       "field \"side\" must be \"client\" or \"origin\""},
  };
  for (const Case& c : cases) {
    auto o = ParseObservationLine(c.line);
    ASSERT_FALSE(o.ok()) << c.line;
    EXPECT_TRUE(absl::StrContains(o.status().message(), c.error)) << o.status();
  }
  // An answer must answer the oldest request open on its origin connection.
  auto trace = ParseTrace("t.jsonl",
                          "{\"side\":\"origin\",\"label\":1,\"conn\":4,\"dir\":\"received\",\"msg\":{}}\n"
                          "{\"side\":\"origin\",\"label\":3,\"conn\":4,\"dir\":\"received\",\"msg\":{}}\n"
                          "{\"side\":\"origin\",\"label\":4,\"conn\":4,\"dir\":\"sent\",\"msg\":{}}\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  TraceValidator v;
  ASSERT_TRUE(v.Accept((*trace)[0]).ok());
  ASSERT_TRUE(v.Accept((*trace)[1]).ok());
  auto out_of_order = v.Accept((*trace)[2]);
  EXPECT_TRUE(absl::StrContains(out_of_order.status().message(),
                                "line 3: answer label 4 on origin conn 4 does not answer the oldest outstanding "
                                "request there (expected label 2)"))
      << out_of_order.status();
}

// The sequence diagram draws a fault as its own row with its fields.
TEST(Observation, DiagramsDrawFaults) {
  harness::Counterexample cx;
  cx.connections = 1;
  cx.verdict.kind = "safety";
  auto trace = ParseTrace("t.jsonl",
                          "{\"label\":1,\"conn\":0,\"dir\":\"sent\",\"msg\":{\"op\":\"get\"}}\n"
                          "{\"event\":\"fault\",\"fault\":\"pause\",\"node\":0}\n"
                          "{\"label\":2,\"conn\":0,\"dir\":\"received\",\"msg\":{\"value\":null}}\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  cx.trace = *trace;
  std::string diagram = harness::RenderSequenceDiagram(cx);
  EXPECT_TRUE(absl::StrContains(diagram, " !!! fault {\"fault\":\"pause\",\"node\":0}\n")) << diagram;
}

// An fs counterexample reads as operations on replicas, runs and trees,
// not clipped JSON.
TEST(Observation, DiagramsOfFsJobsShowOperationsAndTrees) {
  harness::Counterexample cx;
  cx.adapter = "fs";
  cx.verdict.kind = "safety";
  cx.verdict.label = 8;
  auto trace = ParseTrace(
      "t.jsonl",
      "{\"label\":1,\"conn\":0,\"dir\":\"sent\",\"msg\":{\"op\":\"write\",\"replica\":\"a\",\"path\":\"d/p\","
      "\"data\":\"12\",\"via\":\"rename\"}}\n"
      "{\"label\":2,\"conn\":0,\"dir\":\"received\",\"msg\":{\"ok\":true}}\n"
      "{\"label\":3,\"conn\":0,\"dir\":\"sent\",\"msg\":{\"op\":\"rename\",\"replica\":\"b\",\"path\":\"d\",\"to\":"
      "\"e\"}}\n"
      "{\"label\":4,\"conn\":0,\"dir\":\"received\",\"msg\":{\"error\":\"ENOENT\"}}\n"
      "{\"label\":5,\"conn\":0,\"dir\":\"sent\",\"msg\":{\"op\":\"run\"}}\n"
      "{\"label\":6,\"conn\":0,\"dir\":\"received\",\"msg\":{\"exit\":2,\"output\":\"Failed [d]\"}}\n"
      "{\"label\":7,\"conn\":0,\"dir\":\"sent\",\"msg\":{\"op\":\"list\",\"replica\":\"b\"}}\n"
      "{\"label\":8,\"conn\":0,\"dir\":\"received\",\"msg\":{\"tree\":[{\"path\":\"d\",\"kind\":\"dir\"},"
      "{\"path\":\"d/p\",\"kind\":\"file\",\"data\":\"12\"},{\"path\":\"l\",\"kind\":\"link\",\"target\":\"x\"}]}}\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  cx.trace = *trace;
  std::string diagram = harness::RenderSequenceDiagram(cx);
  for (const char* row :
       {"replicas a, b and the program", "--> #1 write a:d/p \"12\" via rename\n", "<-- #2 ok\n",
        "--> #3 rename b:d -> e\n", "<-- #4 error ENOENT\n", "--> #5 run\n", "<-- #6 exit 2 \"Failed [d]\"\n",
        "--> #7 list b\n", "<-- #8 tree: d/ d/p=\"12\" l->x   <== REJECTED"})
    EXPECT_TRUE(absl::StrContains(diagram, row)) << row << "\n" << diagram;
}

// On a cluster, each connection's lane names the node it talks to.
TEST(Observation, DiagramsNameEachConnectionsNode) {
  harness::Counterexample cx;
  cx.verdict.kind = "safety";
  auto trace = ParseTrace("t.jsonl",
                          "{\"label\":1,\"conn\":0,\"dir\":\"sent\",\"msg\":{\"op\":\"get\"}}\n"
                          "{\"label\":3,\"conn\":4,\"dir\":\"sent\",\"msg\":{\"op\":\"get\"}}\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  cx.trace = *trace;
  EXPECT_FALSE(absl::StrContains(harness::RenderSequenceDiagram(cx), "node")) << "one server: no nodes";
  cx.nodes = 3;  // round-robin
  std::string diagram = harness::RenderSequenceDiagram(cx);
  EXPECT_TRUE(absl::StrContains(diagram, "conn 0 -> node 0 ")) << diagram;
  EXPECT_TRUE(absl::StrContains(diagram, "conn 4 -> node 1 ")) << diagram;
  cx.connect_node = 2;
  diagram = harness::RenderSequenceDiagram(cx);
  EXPECT_TRUE(absl::StrContains(diagram, "conn 0 -> node 2 ")) << diagram;
  EXPECT_TRUE(absl::StrContains(diagram, "conn 4 -> node 2 ")) << diagram;
}

}  // namespace
}  // namespace dualswarm::check
