// Unit tests for the trace reader (engine/check/observation.h): what
// ParseTrace accepts and that ObservationToJson writes what it reads.
#include <string>

#include "absl/strings/match.h"
#include "engine/check/observation.h"
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
      "{\"event\":\"closed\",\"conn\":2}\n";
  auto trace = ParseTrace("t.jsonl", text);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->size(), 4u);
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

}  // namespace
}  // namespace dualswarm::check
