// TLS through the real dualswarm-coordinator binary: a self-signed
// certificate for 127.0.0.1/localhost made with the `openssl` CLI in the
// test's temporary directory; a client trusting it gets through, an
// insecure client and a client trusting another certificate do not; bad
// --tls-cert/--tls-key flags are usage errors (exit 2, a clear message)
// reported before any database is started.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dualswarm/v1/spec.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/common/processes.h"

namespace {

namespace v1 = ::dualswarm::v1;
using dualswarm::testing::CoordinatorProcess;
using dualswarm::testing::RunCommand;
using dualswarm::testing::Slurp;

class CoordinatorTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = dualswarm::testing::MakeTempDir("ds-tls");
    ASSERT_FALSE(tmp_.empty());
    MakeCert("server", "subjectAltName=IP:127.0.0.1,DNS:localhost");
    MakeCert("other", "subjectAltName=IP:127.0.0.1,DNS:localhost");
  }

  void TearDown() override {
    coordinator_.reset();
    std::error_code ec;
    std::filesystem::remove_all(tmp_, ec);
  }

  // tmp/NAME.crt and tmp/NAME.key: a self-signed certificate valid for a day.
  void MakeCert(const std::string& name, const std::string& san) {
    auto r =
        RunCommand({"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=dualswarm-test", "-addext", san, "-keyout", Path(name + ".key"), "-out", Path(name + ".crt")});
    ASSERT_EQ(r.exit_code, 0) << "openssl (scripts/setup.sh installs it): " << r.err;
  }

  std::string Path(const std::string& file) const { return tmp_ + "/" + file; }

  // `dualswarm-coordinator ARGS --data-dir tmp/never`: exit code and stderr.
  dualswarm::testing::CommandResult RunBinary(std::vector<std::string> args) {
    args.insert(args.begin(), DUALSWARM_COORDINATOR);
    args.insert(args.end(), {"--listen", "127.0.0.1:0", "--data-dir", Path("never")});
    return RunCommand(args);
  }

  grpc::Status Validate(std::shared_ptr<grpc::Channel> channel, const std::string& token) {
    auto stub = v1::SpecService::NewStub(channel);
    auto ctx = dualswarm::testing::AuthContext(token, std::chrono::seconds(10));
    v1::ValidateSpecRequest q;
    q.set_source("spec s\n");
    v1::ValidateSpecResponse r;
    return stub->Validate(ctx.get(), q, &r);
  }

  std::shared_ptr<grpc::Channel> SslChannel(const std::string& target, const std::string& root_file) {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = Slurp(Path(root_file));
    return grpc::CreateChannel(target, grpc::SslCredentials(o));
  }

  std::string tmp_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
};

TEST_F(CoordinatorTlsTest, TrustedClientsGetThroughOthersDoNot) {
  coordinator_ = std::make_unique<CoordinatorProcess>(CoordinatorProcess::Options{
      DUALSWARM_COORDINATOR, tmp_, "", {"--tls-cert", Path("server.crt"), "--tls-key", Path("server.key")}, 0});
  ASSERT_EQ(coordinator_->Start(), "");
  std::string token = coordinator_->Token("submitter");
  ASSERT_FALSE(token.empty());
  int port = coordinator_->port();

  // Trusting the server's certificate, by IP and by name (both in its SAN).
  grpc::Status st = Validate(SslChannel(absl::StrCat("127.0.0.1:", port), "server.crt"), token);
  EXPECT_TRUE(st.ok()) << st.error_code() << ": " << st.error_message();
  st = Validate(SslChannel(absl::StrCat("localhost:", port), "server.crt"), token);
  EXPECT_TRUE(st.ok()) << st.error_code() << ": " << st.error_message();
  // TLS does not replace tokens.
  st = Validate(SslChannel(absl::StrCat("127.0.0.1:", port), "server.crt"), "");
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED) << st.error_message();

  // Plaintext against a TLS port: the handshake fails, the call is UNAVAILABLE.
  auto t0 = std::chrono::steady_clock::now();
  st = Validate(grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()), token);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE) << st.error_message();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5)) << "fails fast";
  // A client that trusts a different certificate refuses the server.
  st = Validate(SslChannel(absl::StrCat("127.0.0.1:", port), "other.crt"), token);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE) << st.error_message();
  // The server is still fine after the failed handshakes.
  st = Validate(SslChannel(absl::StrCat("127.0.0.1:", port), "server.crt"), token);
  EXPECT_TRUE(st.ok()) << st.error_code() << ": " << st.error_message();
}

TEST_F(CoordinatorTlsTest, BadTlsFlagsAreUsageErrors) {
  std::filesystem::create_directory(Path("a-directory"));
  std::ofstream(Path("garbage.pem")) << "not a certificate\n";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<Case> cases = {
      {{"--tls-cert", Path("server.crt")}, "--tls-cert and --tls-key go together"},
      {{"--tls-key", Path("server.key")}, "--tls-cert and --tls-key go together"},
      {{"--tls-cert", Path("missing.crt"), "--tls-key", Path("server.key")},
       "--tls-cert: cannot read \"" + Path("missing.crt") + "\": No such file or directory"},
      {{"--tls-cert", Path("server.crt"), "--tls-key", Path("missing.key")},
       "--tls-key: cannot read \"" + Path("missing.key") + "\": No such file or directory"},
      {{"--tls-cert", Path("garbage.pem"), "--tls-key", Path("server.key")}, "holds no PEM certificate"},
      {{"--tls-cert", Path("a-directory"), "--tls-key", Path("server.key")}, "--tls-cert"},
      {{"--tls-cert", Path("server.crt"), "--tls-key", Path("server.crt")}, "holds no unencrypted PEM private key"},
      {{"--tls-cert", Path("server.crt"), "--tls-key", Path("other.key")}, "is not the key of the certificate"},
  };
  for (const Case& c : cases) {
    auto r = RunBinary(c.args);
    std::string what = absl::StrJoin(c.args, " ");
    EXPECT_EQ(r.exit_code, 2) << what << "\n" << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, c.message)) << what << ": want \"" << c.message << "\" in:\n" << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(Path("never"))) << "no database is started for a usage error";
}

}  // namespace
