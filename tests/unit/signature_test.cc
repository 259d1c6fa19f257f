// Finding signatures (engine/harness/counterexample.h): the same failure
// from different runs groups together; a failure that kept faults through
// shrinking is another cause than the same-looking one without.
#include <string>
#include <vector>

#include "engine/check/observation.h"
#include "engine/harness/counterexample.h"
#include "gtest/gtest.h"

namespace dualswarm {
namespace {

using check::Observation;
using ir::Value;

Observation Msg(Observation::Kind kind, int64_t label, Value msg) {
  Observation o;
  o.kind = kind;
  o.label = label;
  o.conn = 0;
  o.msg = std::move(msg);
  return o;
}

Observation Fault(const char* name, int node) {
  Observation o;
  o.kind = Observation::Kind::kFault;
  o.msg = Value::Map({{"fault", Value::String(name)}, {"node", Value::Int(node)}});
  return o;
}

// A get (label 1) answered with a value the spec did not expect (label 2).
std::vector<Observation> LostWrite(int64_t first_label) {
  return {Msg(Observation::Kind::kSent, first_label,
              Value::Map({{"key", Value::String("a")}, {"op", Value::String("get")}})),
          Msg(Observation::Kind::kReceived, first_label + 1, Value::Map({{"value", Value::Null()}}))};
}

harness::Verdict SafetyAt(int64_t label) {
  harness::Verdict v;
  v.kind = "safety";
  v.label = label;
  v.spec_loc = "/somewhere/specs/kv.dspec:33:5";
  return v;
}

TEST(Signature, TheSameFailureFromAnotherRunGroupsTogether) {
  const std::string a = harness::ComputeSignature(SafetyAt(2), LostWrite(1));
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(a, harness::ComputeSignature(SafetyAt(8), LostWrite(7)));  // other labels
  harness::Verdict elsewhere = SafetyAt(2);
  elsewhere.spec_loc = "/elsewhere/kv.dspec:33:5";  // another checkout
  EXPECT_EQ(a, harness::ComputeSignature(elsewhere, LostWrite(1)));
}

TEST(Signature, FaultsTheFailureKeptMakeItAnotherCause) {
  const std::string plain = harness::ComputeSignature(SafetyAt(2), LostWrite(1));
  std::vector<Observation> after_kill = {Fault("kill", 0), Fault("restart", 0)};
  for (const Observation& o : LostWrite(1)) after_kill.push_back(o);
  const std::string killed = harness::ComputeSignature(SafetyAt(2), after_kill);
  EXPECT_NE(plain, killed);
  // Which node and how often do not matter; which faults do.
  std::vector<Observation> twice = {Fault("restart", 2), Fault("kill", 1), Fault("kill", 1)};
  for (const Observation& o : LostWrite(5)) twice.push_back(o);
  EXPECT_EQ(killed, harness::ComputeSignature(SafetyAt(6), twice));
  std::vector<Observation> paused = {Fault("pause", 0), Fault("resume", 0)};
  for (const Observation& o : LostWrite(1)) paused.push_back(o);
  EXPECT_NE(killed, harness::ComputeSignature(SafetyAt(2), paused));
  EXPECT_NE(plain, harness::ComputeSignature(SafetyAt(2), paused));
}

// An intermediary's finding against a request it sent the origin: its class
// is that request's, whatever client messages carry the same label number
// (client and origin labels are counted apart).
TEST(Signature, AFindingAtTheOriginIsClassedByTheOriginRequest) {
  auto origin_request = [](int64_t label, const char* method) {
    Observation o = Msg(Observation::Kind::kReceived, label,
                        Value::Map({{"method", Value::String(method)}, {"path", Value::String("/a")}}));
    o.side = check::Side::kOrigin;
    return o;
  };
  auto client = [](int64_t label, const char* method) {
    return Msg(Observation::Kind::kSent, label,
               Value::Map({{"method", Value::String(method)}, {"path", Value::String("/a")}}));
  };
  harness::Verdict v = SafetyAt(3);
  v.origin_side = true;
  // The same wrong revalidation; the client request labelled 3 differs.
  const std::vector<Observation> one = {client(1, "GET"), client(3, "PUT"), origin_request(1, "GET"),
                                        origin_request(3, "GET")};
  const std::vector<Observation> other = {client(1, "GET"), client(3, "DELETE"), origin_request(1, "GET"),
                                          origin_request(3, "GET")};
  EXPECT_EQ(harness::FailureClass(v, one), "safety|GET");
  EXPECT_EQ(harness::FailureClass(v, one), harness::FailureClass(v, other));
  EXPECT_EQ(harness::ComputeSignature(v, one), harness::ComputeSignature(v, other));
}

}  // namespace
}  // namespace dualswarm
