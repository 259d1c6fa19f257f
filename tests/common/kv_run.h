// Test helper for tests that drive the coordinator's gRPC API without a
// real system under test: push a kv spec, add a jsonl target nobody serves
// (127.0.0.1:9), and submit a run of N jobs — what lease, outage and
// protocol tests need before they lease jobs themselves. Header-only.
#ifndef DUALSWARM_TESTS_COMMON_KV_RUN_H_
#define DUALSWARM_TESTS_COMMON_KV_RUN_H_

#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "dualswarm/v1/run.grpc.pb.h"
#include "dualswarm/v1/spec.grpc.pb.h"
#include "dualswarm/v1/target.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/common/processes.h"

namespace dualswarm::testing {

// Pushes `source` (as kv.dspec), adds the target `target_name` and submits
// `jobs` jobs. Tokens: `submitter` for the spec and the run, `admin` for the
// target ("" when the coordinator runs without auth). Failures are test
// failures; the returned run then has id 0.
inline v1::Run SubmitUnservedKvRun(const std::shared_ptr<grpc::Channel>& channel, const std::string& submitter,
                                   const std::string& admin, const std::string& target_name, const std::string& source,
                                   int jobs) {
  auto ctx = [](const std::string& token) { return AuthContext(token, std::chrono::seconds(20)); };
  v1::CreateSpecRequest spec;
  spec.set_file_name("kv.dspec");
  spec.set_source(source);
  v1::CreateSpecResponse created;
  grpc::Status st = v1::SpecService::NewStub(channel)->Create(ctx(submitter).get(), spec, &created);
  EXPECT_TRUE(st.ok()) << "CreateSpec: " << st.error_message();
  v1::CreateTargetRequest treq;
  treq.mutable_target()->set_name(target_name);
  treq.mutable_target()->set_adapter("jsonl");
  treq.mutable_target()->set_address("127.0.0.1:9");
  v1::Target target;
  st = v1::TargetService::NewStub(channel)->Create(ctx(admin).get(), treq, &target);
  EXPECT_TRUE(st.ok()) << "CreateTarget: " << st.error_message();
  v1::SubmitRunRequest sreq;
  sreq.mutable_template_()->set_spec_hash(created.spec().hash());
  sreq.mutable_template_()->set_target_id(target.id());
  sreq.mutable_template_()->set_jobs(jobs);
  v1::Run run;
  st = v1::RunService::NewStub(channel)->Submit(ctx(submitter).get(), sreq, &run);
  EXPECT_TRUE(st.ok()) << "Submit: " << st.error_message();
  return run;
}

}  // namespace dualswarm::testing

#endif  // DUALSWARM_TESTS_COMMON_KV_RUN_H_
