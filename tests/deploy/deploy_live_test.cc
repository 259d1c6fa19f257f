// The shipped monitoring against live processes: a real coordinator (embedded
// PostgreSQL in a temporary directory) and a real worker, both with
// --metrics-listen 127.0.0.1:0.
//
// * DashboardQueriesNameOnlyExportedMetrics: after a small real run (the CLI
//   submits 2 jobs against ds-ref-webdav mutant 6, so a job fails, shrinks and
//   reports a counterexample), /metrics of both is scraped; every metric name
//   in every dashboard query must be a series one of them exports.
// * PrometheusScrapesEveryShippedJob: Debian's prometheus runs on loopback
//   with deploy/prometheus/prometheus.yml (job names kept, the live ports
//   substituted, 1 s scrape interval); every target of every shipped job
//   must be up within 30 s, the scraped values must be there, and every
//   dashboard query must be valid PromQL that Prometheus evaluates.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/common/http_get.h"
#include "tests/common/processes.h"
#include "tests/deploy/deploy_files.h"

namespace {

using dualswarm::testing::CoordinatorProcess;
using dualswarm::testing::HttpGet;
using dualswarm::testing::PortAfter;
using dualswarm::testing::Slurp;
using dualswarm::testing::WaitFor;
using std::chrono::seconds;

const char* kPrometheus = "/usr/bin/prometheus";

// A free loopback port (bound and released; Prometheus binds it right after).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

std::string UrlEncode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

// A child process with its output in a log; SIGTERM, then SIGKILL, on
// destruction.
struct Child {
  pid_t pid = -1;
  std::string log;
  ~Child() { Stop(); }
  void Stop() {
    if (pid <= 0) return;
    kill(pid, SIGTERM);
    int status;
    if (!WaitFor([&] { return waitpid(pid, &status, WNOHANG) == pid; }, seconds(20))) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    pid = -1;
  }
};

class DeployLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = dualswarm::testing::MakeTempDir("ds-deploy");
    ASSERT_FALSE(tmp_.empty());
    coordinator_ = std::make_unique<CoordinatorProcess>(CoordinatorProcess::Options{
        DUALSWARM_COORDINATOR, tmp_, "", {"--metrics-listen", "127.0.0.1:0", "--lease-ms", "5000"}, 0});
    std::string err = coordinator_->Start();
    ASSERT_EQ(err, "");
    coordinator_metrics_ = PortAfter(coordinator_->log(), "metrics on 127.0.0.1:");
    ASSERT_GT(coordinator_metrics_, 0) << coordinator_->log();
    admin_ = coordinator_->Token("admin");
    submitter_ = coordinator_->Token("submitter");
    std::string worker_token = coordinator_->Token("worker");
    ASSERT_FALSE(admin_.empty() || submitter_.empty() || worker_token.empty());

    worker_.log = tmp_ + "/worker.log";
    worker_.pid = dualswarm::testing::Spawn({DUALSWARM_WORKER, "--coordinator", coordinator_->address(), "--slots", "2",
                                             "--name", "deploy-w1", "--work-dir", tmp_ + "/worker", "--metrics-listen",
                                             "127.0.0.1:0", "--lease-wait-ms", "500", "--shrink-time", "10"},
                                            worker_.log, {{"DUALSWARM_TOKEN", worker_token}});
    ASSERT_GT(worker_.pid, 0);
    ASSERT_TRUE(WaitFor([&] { return absl::StrContains(Slurp(worker_.log), "registered with"); }, seconds(30)))
        << Slurp(worker_.log);
    worker_metrics_ = PortAfter(Slurp(worker_.log), "metrics on 127.0.0.1:");
    ASSERT_GT(worker_metrics_, 0) << Slurp(worker_.log);
  }

  void TearDown() override {
    prometheus_.Stop();
    worker_.Stop();
    coordinator_.reset();
    if (!HasFailure()) {
      std::error_code ec;
      std::filesystem::remove_all(tmp_, ec);
    } else {
      std::fprintf(stderr, "test files kept in %s\n", tmp_.c_str());
    }
  }

  // `dualswarm ARGS...` against the coordinator, bounded by `limit`.
  dualswarm::testing::CommandResult Cli(const std::string& token, std::vector<std::string> args,
                                        int limit_seconds = 60) {
    std::vector<std::string> argv = {"/usr/bin/timeout", "-k", "5", absl::StrCat(limit_seconds), DUALSWARM_CLI};
    argv.insert(argv.end(), args.begin(), args.end());
    return dualswarm::testing::RunCommand(argv,
                                          {{"DUALSWARM_ADDR", coordinator_->address()}, {"DUALSWARM_TOKEN", token}});
  }

  // A 2-job swarm run of specs/http_webdav.dspec against ds-ref-webdav
  // mutant 6: at least one job fails, shrinks and reports a counterexample.
  void RunASmallSwarm() {
    std::string launch = absl::StrCat(DS_REF_WEBDAV, " --port {port} --dir {dir} --mutant 6");
    auto r = Cli(admin_, {"target", "add", "webdav-m6", "--adapter", "http", "--launch", launch});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    r = Cli(submitter_, {"spec", "push", std::string(DUALSWARM_SOURCE_DIR) + "/specs/http_webdav.dspec"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    r = Cli(submitter_,
            {"run", "submit", "--spec-name", "http_webdav", "--target", "webdav-m6", "--jobs", "2", "--steps", "2000",
             "--seed", "1", "--watch"},
            180);
    ASSERT_EQ(r.exit_code, 1) << "the run should fail with findings\n"
                              << r.out << r.err << "\n--- worker\n"
                              << Slurp(worker_.log);
  }

  std::string tmp_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::string admin_, submitter_;
  Child worker_, prometheus_;
  int coordinator_metrics_ = 0, worker_metrics_ = 0;
};

TEST_F(DeployLiveTest, DashboardQueriesNameOnlyExportedMetrics) {
  RunASmallSwarm();
  // The database gauges refresh every 2 s.
  std::this_thread::sleep_for(seconds(3));
  std::string coord_text = HttpGet(coordinator_metrics_, "/metrics");
  std::string worker_text = HttpGet(worker_metrics_, "/metrics");
  ASSERT_TRUE(absl::StrContains(coord_text, "dualswarm_jobs{")) << coord_text;
  ASSERT_TRUE(absl::StrContains(worker_text, "dualswarm_worker_slots ")) << worker_text;
  // The run really happened, as the scrapes see it.
  EXPECT_GE(dualswarm::testing::MetricSample(coord_text, "dualswarm_jobs{state=\"failed\"}").value_or(0), 1.0)
      << coord_text;
  EXPECT_EQ(dualswarm::testing::MetricSample(coord_text, "dualswarm_job_duration_seconds_count"), 2.0) << coord_text;
  EXPECT_GE(
      dualswarm::testing::MetricSample(worker_text, "dualswarm_worker_jobs_total{outcome=\"failed\"}").value_or(0), 1.0)
      << worker_text;

  std::set<std::string> exported = dualswarm::testing::SampleNames(coord_text);
  for (const auto& n : dualswarm::testing::SampleNames(worker_text)) exported.insert(n);

  std::vector<dualswarm::testing::DashboardQuery> queries = dualswarm::testing::DashboardQueries();
  ASSERT_GE(queries.size(), 30u);
  std::vector<std::string> missing;
  std::set<std::string> used;
  for (const auto& q : queries) {
    for (const std::string& m : dualswarm::testing::MetricNamesInPromQL(q.expr)) {
      used.insert(m);
      if (!exported.count(m)) missing.push_back(absl::StrCat(q.dashboard, " / ", q.panel, ": ", m, "  in  ", q.expr));
    }
  }
  EXPECT_TRUE(missing.empty()) << "dashboard queries name metrics the binaries do not export:\n"
                               << absl::StrJoin(missing, "\n") << "\n--- exported:\n"
                               << absl::StrJoin(exported, "\n");
  // For the record: exported dualswarm_ series no dashboard shows.
  std::vector<std::string> unused;
  for (const auto& e : exported)
    if (absl::StartsWith(e, "dualswarm_") && !used.count(e)) unused.push_back(e);
  std::fprintf(stderr, "exported but on no dashboard: %s\n", absl::StrJoin(unused, ", ").c_str());
}

TEST_F(DeployLiveTest, PrometheusScrapesEveryShippedJob) {
  ASSERT_EQ(access(kPrometheus, X_OK), 0) << "Debian's prometheus is missing: run scripts/setup.sh";
  // The shipped config with the live ports and a 1 s scrape interval; the
  // job names stay.
  YAML::Node config = YAML::LoadFile(dualswarm::testing::DeployPath("prometheus/prometheus.yml"));
  config["global"]["scrape_interval"] = "1s";
  config["global"]["scrape_timeout"] = "1s";
  config["global"]["evaluation_interval"] = "1s";
  std::map<std::string, int> live = {{"dualswarm-coordinator", coordinator_metrics_},
                                     {"dualswarm-worker", worker_metrics_}};
  std::set<std::string> jobs;
  for (auto sc : config["scrape_configs"]) {
    std::string job = sc["job_name"].as<std::string>();
    ASSERT_TRUE(live.count(job)) << "no live process for shipped job " << job;
    jobs.insert(job);
    YAML::Node static_config;
    static_config["targets"].push_back(absl::StrCat("127.0.0.1:", live[job]));
    YAML::Node list;
    list.push_back(static_config);
    sc["static_configs"] = list;
  }
  ASSERT_EQ(jobs.size(), live.size());
  std::string config_path = tmp_ + "/prometheus.yml";
  {
    YAML::Emitter out;
    out << config;
    std::ofstream(config_path) << out.c_str() << "\n";
  }
  int port = FreePort();
  ASSERT_GT(port, 0);
  prometheus_.log = tmp_ + "/prometheus.log";
  prometheus_.pid = dualswarm::testing::Spawn(
      {kPrometheus, "--config.file=" + config_path, "--storage.tsdb.path=" + tmp_ + "/prometheus-data",
       absl::StrCat("--web.listen-address=127.0.0.1:", port), "--log.level=warn"},
      prometheus_.log);
  ASSERT_GT(prometheus_.pid, 0);
  int status = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        status = 0;
        HttpGet(port, "/-/ready", &status);
        return status == 200;
      },
      seconds(30)))
      << Slurp(prometheus_.log) << "\n--- config\n"
      << Slurp(config_path);

  // Every target of every shipped job is up (bounded: 30 s at a 1 s interval).
  std::string last;
  auto all_up = [&] {
    last = HttpGet(port, "/api/v1/targets?state=active");
    YAML::Node resp;
    try {
      resp = YAML::Load(last);  // JSON is YAML
    } catch (const YAML::Exception&) {
      return false;
    }
    std::map<std::string, int> up_by_job;
    int total = 0;
    for (const auto& t : resp["data"]["activeTargets"]) {
      ++total;
      if (t["health"].as<std::string>("") != "up") return false;
      ++up_by_job[t["labels"]["job"].as<std::string>("")];
    }
    for (const auto& j : jobs)
      if (up_by_job[j] != 1) return false;
    return total == static_cast<int>(jobs.size());
  };
  ASSERT_TRUE(WaitFor(all_up, seconds(30))) << "targets not all up within 30 s:\n"
                                            << last << "\n--- prometheus log\n"
                                            << Slurp(prometheus_.log);

  // Prometheus has the values, from the right jobs.
  auto query = [&](const std::string& expr) {
    return HttpGet(port, "/api/v1/query?query=" + UrlEncode(expr), &status);
  };
  auto single_value = [&](const std::string& expr) -> std::string {
    YAML::Node r = YAML::Load(query(expr));
    if (r["data"]["result"].size() != 1) return "";
    return r["data"]["result"][0]["value"][1].as<std::string>("");
  };
  EXPECT_TRUE(
      WaitFor([&] { return single_value("dualswarm_worker_slots{job=\"dualswarm-worker\"}") == "2"; }, seconds(10)));
  EXPECT_TRUE(WaitFor([&] { return single_value("dualswarm_workers_alive{job=\"dualswarm-coordinator\"}") == "1"; },
                      seconds(10)))
      << query("dualswarm_workers_alive");

  // Every dashboard query is PromQL that Prometheus evaluates (Grafana's
  // interval macros replaced by 1m).
  for (const auto& q : dualswarm::testing::DashboardQueries()) {
    std::string expr = dualswarm::testing::WithoutGrafanaMacros(q.expr);
    std::string body = query(expr);
    EXPECT_EQ(status, 200) << q.dashboard << " / " << q.panel << ": " << expr << "\n" << body;
    EXPECT_TRUE(absl::StrContains(body, "\"status\":\"success\""))
        << q.dashboard << " / " << q.panel << ": " << expr << "\n"
        << body;
  }
}

}  // namespace
