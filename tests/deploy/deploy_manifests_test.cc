// The shipped deployment files parse and say what the binaries understand:
// deploy/prometheus/prometheus.yml (YAML, promtool), the Grafana
// provisioning and dashboards (JSON: uids, datasource, panels with queries on
// the right jobs and the metrics each dashboard is for), the systemd units
// (ExecStart, restart and stop policy, hardening, drain time) and the
// Kubernetes manifests (kind/apiVersion/metadata, images and commands, probes
// and resources, Service selectors and HPA targets that match the
// Deployments, Secrets that exist). Every flag written in a unit or a
// manifest — comments included — must be one the real binary lists in
// --helpfull.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/common/processes.h"
#include "tests/deploy/deploy_files.h"

namespace {

using dualswarm::testing::BinaryFlags;
using dualswarm::testing::DeployFiles;
using dualswarm::testing::DeployPath;
using dualswarm::testing::FlagKnown;
using dualswarm::testing::FlagsIn;
using dualswarm::testing::Slurp;
namespace ir = dualswarm::ir;

const std::set<std::string>& CoordinatorFlags() {
  static const auto* flags = new std::set<std::string>(BinaryFlags(DUALSWARM_COORDINATOR));
  return *flags;
}
const std::set<std::string>& WorkerFlags() {
  static const auto* flags = new std::set<std::string>(BinaryFlags(DUALSWARM_WORKER));
  return *flags;
}
// The flags of the binary named by a path or an image (coordinator/worker).
const std::set<std::string>* FlagsOf(const std::string& binary_or_image) {
  if (absl::StrContains(binary_or_image, "coordinator")) return &CoordinatorFlags();
  if (absl::StrContains(binary_or_image, "worker")) return &WorkerFlags();
  return nullptr;
}

// Every flag token in `text` that `flags` does not define.
std::vector<std::string> UnknownFlags(absl::string_view text, const std::set<std::string>& flags) {
  std::vector<std::string> bad;
  for (const std::string& f : FlagsIn(text))
    if (!FlagKnown(flags, f)) bad.push_back("--" + f);
  return bad;
}

// The value after `flag` (spelled with hyphens) in an argument list, or "".
std::string ArgValue(const std::vector<std::string>& args, const std::string& flag) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == flag && i + 1 < args.size()) return args[i + 1];
    if (absl::StartsWith(args[i], flag + "=")) return args[i].substr(flag.size() + 1);
  }
  return "";
}

int PortOf(const std::string& host_port) {
  int port = 0;
  size_t colon = host_port.rfind(':');
  if (colon == std::string::npos || !absl::SimpleAtoi(host_port.substr(colon + 1), &port)) return 0;
  return port;
}

TEST(DeployManifests, TheBinariesListTheirFlags) {
  // The other tests compare against these lists: make sure they are real.
  for (const char* f : {"listen", "database_url", "data_dir", "metrics_listen", "tls_cert", "tls_key", "lease_ms"})
    EXPECT_TRUE(CoordinatorFlags().count(f)) << f;
  for (const char* f : {"coordinator", "token", "slots", "metrics_listen", "work_dir", "drain_seconds", "tls_ca"})
    EXPECT_TRUE(WorkerFlags().count(f)) << f;
  EXPECT_FALSE(FlagKnown(CoordinatorFlags(), "no_such_flag"));
  EXPECT_EQ(FlagsIn("a --metrics-listen=1 --x_y 2 b--c \"--tls-ca\""),
            (std::vector<std::string>{"metrics_listen", "x_y", "tls_ca"}));
}

// ---- Prometheus

TEST(DeployManifests, PrometheusConfigScrapesCoordinatorAndWorkers) {
  std::string path = DeployPath("prometheus/prometheus.yml");
  YAML::Node config;
  ASSERT_NO_THROW(config = YAML::LoadFile(path)) << path;
  std::vector<std::string> jobs = dualswarm::testing::PrometheusJobNames(config);
  EXPECT_EQ(std::set<std::string>(jobs.begin(), jobs.end()),
            (std::set<std::string>{"dualswarm-coordinator", "dualswarm-worker"}));
  EXPECT_EQ(jobs.size(), 2u) << "job names must be unique";
  for (const auto& sc : config["scrape_configs"]) {
    std::string job = sc["job_name"].as<std::string>();
    ASSERT_TRUE(sc["static_configs"].IsSequence()) << job;
    std::vector<std::string> targets;
    for (const auto& s : sc["static_configs"])
      for (const auto& t : s["targets"]) targets.push_back(t.as<std::string>());
    ASSERT_FALSE(targets.empty()) << job;
    for (const auto& t : targets) EXPECT_GT(PortOf(t), 0) << job << ": " << t;
    // The single-machine defaults: the coordinator's --metrics-listen
    // default and the port the worker unit uses.
    if (job == "dualswarm-coordinator") {
      EXPECT_EQ(targets[0], "127.0.0.1:9464");
    } else {
      EXPECT_EQ(targets[0], "127.0.0.1:9465");
    }
  }
  // Prometheus's own checker (Debian's prometheus package).
  ASSERT_EQ(access("/usr/bin/promtool", X_OK), 0) << "promtool missing: run scripts/setup.sh";
  auto r = dualswarm::testing::RunCommand({"/usr/bin/promtool", "check", "config", path});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

// ---- Grafana

TEST(DeployManifests, GrafanaProvisioningAndDashboards) {
  YAML::Node ds, providers;
  ASSERT_NO_THROW(ds = YAML::LoadFile(DeployPath("grafana/provisioning/datasources/dualswarm.yml")));
  ASSERT_NO_THROW(providers = YAML::LoadFile(DeployPath("grafana/provisioning/dashboards/dualswarm.yml")));
  EXPECT_EQ(ds["apiVersion"].as<int>(0), 1);
  ASSERT_EQ(ds["datasources"].size(), 1u);
  const YAML::Node source = ds["datasources"][0];
  EXPECT_EQ(source["type"].as<std::string>(""), "prometheus");
  EXPECT_TRUE(absl::StartsWith(source["url"].as<std::string>(""), "http")) << source["url"];
  std::string uid = source["uid"].as<std::string>("");
  ASSERT_FALSE(uid.empty());
  EXPECT_EQ(providers["apiVersion"].as<int>(0), 1);
  ASSERT_EQ(providers["providers"].size(), 1u);
  EXPECT_EQ(providers["providers"][0]["type"].as<std::string>(""), "file");
  EXPECT_FALSE(providers["providers"][0]["options"]["path"].as<std::string>("").empty());

  YAML::Node prom = YAML::LoadFile(DeployPath("prometheus/prometheus.yml"));
  std::vector<std::string> job_list = dualswarm::testing::PrometheusJobNames(prom);
  std::set<std::string> jobs(job_list.begin(), job_list.end());

  std::vector<std::string> files = DeployFiles("grafana/dashboards", ".json");
  std::set<std::string> names;
  for (const auto& f : files) names.insert(std::filesystem::path(f).filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"fleet.json", "runs.json", "tester-internals.json"}));

  // What each dashboard is for: metrics its queries must use.
  std::map<std::string, std::vector<std::string>> wanted = {
      {"fleet.json",
       {"dualswarm_workers_alive", "dualswarm_worker_slots", "dualswarm_worker_slots_busy", "dualswarm_jobs",
        "dualswarm_lease_latency_seconds_bucket"}},
      {"runs.json",
       {"dualswarm_runs", "dualswarm_jobs_completed_total", "dualswarm_job_duration_seconds_bucket",
        "dualswarm_findings"}},
      {"tester-internals.json",
       {"dualswarm_worker_requests_sent_total", "dualswarm_worker_steps_per_second", "dualswarm_worker_frontier_size",
        "dualswarm_worker_solver_checks_total", "dualswarm_worker_z3_seconds_total",
        "dualswarm_worker_shrink_reruns_total"}},
  };
  std::set<std::string> uids;
  const std::regex job_matcher(R"re(job\s*=\s*"([^"]*)")re");
  for (const std::string& file : files) {
    std::string name = std::filesystem::path(file).filename().string();
    SCOPED_TRACE(name);
    auto dash = dualswarm::testing::LoadDashboard(file);
    ASSERT_TRUE(dash.ok()) << dash.status();
    std::string dash_uid = dualswarm::testing::StringField(*dash, "uid");
    EXPECT_FALSE(dash_uid.empty());
    EXPECT_TRUE(uids.insert(dash_uid).second) << "duplicate uid " << dash_uid;
    EXPECT_FALSE(dualswarm::testing::StringField(*dash, "title").empty());
    const ir::Value* panels_v = dualswarm::testing::Field(*dash, "panels");
    ASSERT_NE(panels_v, nullptr);
    std::vector<const ir::Value*> panels;
    dualswarm::testing::CollectPanels(*panels_v, &panels);
    std::set<int64_t> ids;
    std::set<std::string> used;
    int queries = 0;
    for (const ir::Value* p : panels) {
      std::string title = dualswarm::testing::StringField(*p, "title");
      SCOPED_TRACE(title);
      EXPECT_FALSE(title.empty());
      const ir::Value* id = dualswarm::testing::Field(*p, "id");
      ASSERT_TRUE(id != nullptr && id->is_int());
      EXPECT_TRUE(ids.insert(id->as_int()).second) << "duplicate panel id " << id->as_int();
      const ir::Value* grid = dualswarm::testing::Field(*p, "gridPos");
      ASSERT_NE(grid, nullptr);
      for (const char* k : {"x", "y", "w", "h"}) {
        const ir::Value* v = dualswarm::testing::Field(*grid, k);
        ASSERT_TRUE(v != nullptr && v->is_int()) << k;
      }
      EXPECT_LE(dualswarm::testing::Field(*grid, "x")->as_int() + dualswarm::testing::Field(*grid, "w")->as_int(), 24);
      if (dualswarm::testing::StringField(*p, "type") == "row") continue;
      const ir::Value* pds = dualswarm::testing::Field(*p, "datasource");
      ASSERT_NE(pds, nullptr);
      EXPECT_EQ(dualswarm::testing::StringField(*pds, "uid"), uid) << "panels use the provisioned datasource";
      const ir::Value* targets = dualswarm::testing::Field(*p, "targets");
      ASSERT_TRUE(targets != nullptr && targets->is_list() && !targets->as_list().empty());
      for (const ir::Value& t : targets->as_list()) {
        std::string expr = dualswarm::testing::StringField(t, "expr");
        ASSERT_FALSE(expr.empty());
        ++queries;
        auto metrics = dualswarm::testing::MetricNamesInPromQL(expr);
        EXPECT_TRUE(!metrics.empty() || absl::StrContains(expr, "up{")) << expr;
        used.insert(metrics.begin(), metrics.end());
        // Queries select on the shipped scrape jobs.
        for (std::sregex_iterator m(expr.begin(), expr.end(), job_matcher), end; m != end; ++m)
          EXPECT_TRUE(jobs.count((*m)[1].str())) << "unknown job " << (*m)[1].str() << " in " << expr;
        if (!metrics.empty()) {
          bool worker = absl::StrContains(expr, "dualswarm_worker_");
          std::string job = worker ? "dualswarm-worker" : "dualswarm-coordinator";
          EXPECT_TRUE(absl::StrContains(expr, "job=\"" + job + "\"")) << "select job " << job << ": " << expr;
        }
      }
    }
    EXPECT_GE(queries, 8);
    for (const std::string& m : wanted[name]) EXPECT_TRUE(used.count(m)) << name << " does not show " << m;
  }
}

// ---- systemd

struct Unit {
  std::map<std::string, std::map<std::string, std::vector<std::string>>> sections;
  std::string Get(const std::string& section, const std::string& key) const {
    auto s = sections.find(section);
    if (s == sections.end()) return "";
    auto k = s->second.find(key);
    return k == s->second.end() || k->second.empty() ? "" : k->second.back();
  }
};

// systemd's unit syntax: [Section], Key=Value, '#'/';' comments, lines
// continued with a trailing backslash.
Unit ParseUnit(const std::string& text, std::string* error) {
  Unit u;
  std::string section, pending;
  int n = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++n;
    std::string line(absl::StripAsciiWhitespace(raw));
    if (pending.empty() && (line.empty() || line[0] == '#' || line[0] == ';')) continue;
    if (!pending.empty() && (line[0] == '#' || line[0] == ';')) continue;  // comments inside continuations
    if (!line.empty() && line.back() == '\\') {
      line.pop_back();
      pending += line + " ";
      continue;
    }
    line = pending + line;
    pending.clear();
    if (line.front() == '[') {
      if (line.back() != ']') *error = absl::StrCat("line ", n, ": bad section header");
      section = line.substr(1, line.size() - 2);
      continue;
    }
    size_t eq = line.find('=');
    if (eq == std::string::npos || section.empty()) {
      *error = absl::StrCat("line ", n, ": not Key=Value in a section: ", line);
      continue;
    }
    u.sections[section][std::string(absl::StripAsciiWhitespace(line.substr(0, eq)))].push_back(
        std::string(absl::StripAsciiWhitespace(line.substr(eq + 1))));
  }
  if (!pending.empty()) *error = "the file ends in a continuation";
  return u;
}

// Seconds in a systemd time span like "75", "75s", "2min".
double Seconds(const std::string& span) {
  double v = 0;
  if (absl::EndsWith(span, "min") && absl::SimpleAtod(span.substr(0, span.size() - 3), &v)) return v * 60;
  if (absl::EndsWith(span, "s") && absl::SimpleAtod(span.substr(0, span.size() - 1), &v)) return v;
  return absl::SimpleAtod(span, &v) ? v : -1;
}

// KEY=VALUE lines of an EnvironmentFile.
std::map<std::string, std::string> EnvFile(const std::string& path) {
  std::map<std::string, std::string> env;
  for (absl::string_view line : absl::StrSplit(Slurp(path), '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    size_t eq = line.find('=');
    if (eq != absl::string_view::npos) env[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  return env;
}

TEST(DeployManifests, SystemdUnits) {
  std::vector<std::string> units = DeployFiles("systemd", ".service");
  std::set<std::string> names;
  for (const auto& u : units) names.insert(std::filesystem::path(u).filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"dualswarm-coordinator.service", "dualswarm-worker.service"}));
  for (const std::string& path : units) {
    std::string file = std::filesystem::path(path).filename().string();
    SCOPED_TRACE(file);
    std::string text = Slurp(path);
    std::string error;
    Unit u = ParseUnit(text, &error);
    EXPECT_EQ(error, "");
    for (const char* s : {"Unit", "Service", "Install"}) EXPECT_TRUE(u.sections.count(s)) << s;
    std::string exec = u.Get("Service", "ExecStart");
    ASSERT_FALSE(exec.empty());
    std::vector<std::string> argv = absl::StrSplit(exec, ' ', absl::SkipWhitespace());
    const std::set<std::string>* flags = FlagsOf(argv[0]);
    ASSERT_NE(flags, nullptr) << argv[0];
    EXPECT_TRUE(absl::StartsWith(argv[0], "/")) << "ExecStart needs an absolute path";
    EXPECT_EQ(std::filesystem::path(argv[0]).filename().string(),
              file == "dualswarm-coordinator.service" ? "dualswarm-coordinator" : "dualswarm-worker");
    // Every flag, in ExecStart and in the comments, is a real one.
    EXPECT_EQ(UnknownFlags(text, *flags), std::vector<std::string>{});
    // Stop and restart policy, hardening.
    EXPECT_EQ(u.Get("Service", "Restart"), "on-failure");
    EXPECT_EQ(u.Get("Service", "KillSignal"), "SIGTERM");
    EXPECT_TRUE(u.Get("Service", "DynamicUser") == "yes" || !u.Get("Service", "User").empty());
    EXPECT_EQ(u.Get("Service", "NoNewPrivileges"), "yes");
    EXPECT_FALSE(u.Get("Service", "ProtectSystem").empty());
    EXPECT_EQ(u.Get("Install", "WantedBy"), "multi-user.target");
    // Tokens and the database URL come from an EnvironmentFile, and every
    // ${VAR} of ExecStart is set in the shipped example of that file.
    std::string env_file = u.Get("Service", "EnvironmentFile");
    ASSERT_TRUE(absl::StartsWith(env_file, "/etc/dualswarm/")) << env_file;
    std::string example = DeployPath("systemd/" + std::filesystem::path(env_file).stem().string() + ".env.example");
    ASSERT_TRUE(std::filesystem::exists(example)) << example;
    auto env = EnvFile(example);
    std::smatch m;
    for (std::string rest = exec; std::regex_search(rest, m, std::regex(R"(\$\{([A-Za-z_0-9]+)\})")); rest = m.suffix())
      EXPECT_TRUE(env.count(m[1].str())) << "${" << m[1].str() << "} is not set in " << example;
    double stop = Seconds(u.Get("Service", "TimeoutStopSec"));
    if (file == "dualswarm-worker.service") {
      EXPECT_TRUE(env.count("DUALSWARM_TOKEN") && env.count("DUALSWARM_ADDR"));
      // The drain: SIGTERM to the daemon only, and systemd waits longer than
      // drain + 5 s (children) + 10 s (reports).
      EXPECT_EQ(u.Get("Service", "KillMode"), "mixed");
      double drain = 30;
      std::string d = ArgValue(argv, "--drain-seconds");
      if (!d.empty()) {
        ASSERT_TRUE(absl::SimpleAtod(d, &drain)) << d;
      }
      EXPECT_GT(stop, drain + 15) << "TimeoutStopSec must exceed --drain-seconds + 15";
      EXPECT_EQ(PortOf(env["DUALSWARM_METRICS_LISTEN"]), 9465);  // what prometheus.yml scrapes
    } else {
      EXPECT_GT(stop, 5);  // the server's 5 s shutdown grace
      EXPECT_TRUE(absl::StrContains(exec, "--tryfromenv=database_url") ||
                  absl::StrContains(exec, "--fromenv=database_url"));
      EXPECT_TRUE(env.count("FLAGS_database_url"));
      EXPECT_EQ(PortOf(env["DUALSWARM_METRICS_LISTEN"]), 9464);
    }
  }

  // systemd's own checker, with ExecStart pointing at the built binaries.
  ASSERT_EQ(access("/usr/bin/systemd-analyze", X_OK), 0)
      << "needs systemd-analyze (package systemd; bash scripts/setup.sh installs it)";
  std::string dir = dualswarm::testing::MakeTempDir("ds-units");
  std::vector<std::string> argv = {"/usr/bin/systemd-analyze", "verify"};
  for (const std::string& path : units) {
    std::string text = Slurp(path);
    for (auto [from, to] :
         {std::pair<std::string, std::string>{"/usr/local/bin/dualswarm-coordinator", DUALSWARM_COORDINATOR},
          {"/usr/local/bin/dualswarm-worker", DUALSWARM_WORKER}})
      for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    std::string copy = dir + "/" + std::filesystem::path(path).filename().string();
    std::ofstream(copy) << text;
    argv.push_back(copy);
  }
  auto r = dualswarm::testing::RunCommand(argv);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::filesystem::remove_all(dir);
}

// ---- Kubernetes

struct K8sObject {
  std::string file;
  YAML::Node node;
  std::string kind() const { return node["kind"].as<std::string>(""); }
  std::string name() const { return node["metadata"]["name"].as<std::string>(""); }
};

std::vector<K8sObject> LoadK8s() {
  std::vector<K8sObject> out;
  for (const std::string& path : DeployFiles("k8s", ".yaml")) {
    std::vector<YAML::Node> docs;
    try {
      docs = YAML::LoadAllFromFile(path);
    } catch (const YAML::Exception& e) {
      ADD_FAILURE() << path << ": " << e.what();
      continue;
    }
    for (auto& d : docs)
      if (!d.IsNull()) out.push_back({std::filesystem::path(path).filename().string(), d});
  }
  return out;
}

std::map<std::string, std::string> StringMap(const YAML::Node& n) {
  std::map<std::string, std::string> out;
  if (n.IsMap())
    for (const auto& kv : n) out[kv.first.as<std::string>()] = kv.second.as<std::string>("");
  return out;
}

bool Subset(const std::map<std::string, std::string>& a, const std::map<std::string, std::string>& b) {
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || it->second != v) return false;
  }
  return true;
}

TEST(DeployManifests, KubernetesManifests) {
  std::vector<K8sObject> objects = LoadK8s();
  ASSERT_FALSE(objects.empty());
  std::map<std::string, const K8sObject*> deployments, services, hpas;
  std::map<std::string, std::set<std::string>> secrets;  // name -> keys
  const std::map<std::string, std::string> api = {{"Namespace", "v1"},
                                                  {"Secret", "v1"},
                                                  {"Service", "v1"},
                                                  {"Deployment", "apps/v1"},
                                                  {"HorizontalPodAutoscaler", "autoscaling/v2"}};
  for (const K8sObject& o : objects) {
    SCOPED_TRACE(o.file + ": " + o.kind() + " " + o.name());
    ASSERT_TRUE(api.count(o.kind())) << "unexpected kind";
    EXPECT_EQ(o.node["apiVersion"].as<std::string>(""), api.at(o.kind()));
    EXPECT_TRUE(std::regex_match(o.name(), std::regex("[a-z0-9]([-a-z0-9]*[a-z0-9])?"))) << "metadata.name";
    if (o.kind() != "Namespace") {
      EXPECT_EQ(o.node["metadata"]["namespace"].as<std::string>(""), "dualswarm");
    }
    if (o.kind() == "Deployment") deployments[o.name()] = &o;
    if (o.kind() == "Service") services[o.name()] = &o;
    if (o.kind() == "HorizontalPodAutoscaler") hpas[o.name()] = &o;
    if (o.kind() == "Secret")
      for (const char* field : {"stringData", "data"})
        for (const auto& kv : o.node[field]) secrets[o.name()].insert(kv.first.as<std::string>());
  }
  ASSERT_TRUE(deployments.count("dualswarm-coordinator"));
  ASSERT_TRUE(deployments.count("dualswarm-worker"));
  ASSERT_TRUE(services.count("dualswarm-coordinator"));
  ASSERT_EQ(hpas.size(), 1u);

  // Container ports of each Deployment, by name.
  std::map<std::string, std::map<std::string, int>> ports_of;
  std::map<std::string, std::vector<std::string>> args_of;
  for (const auto& [name, d] : deployments) {
    SCOPED_TRACE(d->file + ": Deployment " + name);
    const YAML::Node spec = d->node["spec"];
    auto selector = StringMap(spec["selector"]["matchLabels"]);
    ASSERT_FALSE(selector.empty());
    EXPECT_TRUE(Subset(selector, StringMap(spec["template"]["metadata"]["labels"])))
        << "selector.matchLabels must match the pod template's labels";
    const YAML::Node containers = spec["template"]["spec"]["containers"];
    ASSERT_TRUE(containers.IsSequence() && containers.size() == 1);
    const YAML::Node c = containers[0];
    EXPECT_FALSE(c["name"].as<std::string>("").empty());
    // Images: dualswarm/coordinator:VERSION and dualswarm/worker:VERSION.
    std::string image = c["image"].as<std::string>("");
    std::string component = name.substr(std::string("dualswarm-").size());
    EXPECT_TRUE(std::regex_match(image, std::regex("dualswarm/" + component + ":[A-Za-z0-9_][A-Za-z0-9_.-]*")))
        << image;
    ASSERT_TRUE(c["command"].IsSequence() && c["command"].size() >= 1);
    std::string binary = c["command"][0].as<std::string>();
    EXPECT_EQ(std::filesystem::path(binary).filename().string(), name) << binary;
    const std::set<std::string>* flags = FlagsOf(name);
    ASSERT_NE(flags, nullptr);
    std::vector<std::string> args;
    for (const auto& a : c["args"]) args.push_back(a.as<std::string>());
    ASSERT_FALSE(args.empty());
    args_of[name] = args;
    // Flags in args, and in the file's comments, exist in the binary.
    for (const std::string& a : args) {
      if (absl::StartsWith(a, "--")) {
        EXPECT_EQ(UnknownFlags(a, *flags), std::vector<std::string>{});
      }
    }
    EXPECT_EQ(UnknownFlags(Slurp(DeployPath("k8s/" + d->file)), *flags), std::vector<std::string>{});
    for (const auto& p : c["ports"]) ports_of[name][p["name"].as<std::string>("")] = p["containerPort"].as<int>(0);
    ASSERT_TRUE(ports_of[name].count("metrics"));
    EXPECT_EQ(PortOf(ArgValue(args, "--metrics-listen")), ports_of[name]["metrics"]);
    // Probes on ports the container has; resource requests.
    for (const char* probe : {"livenessProbe", "readinessProbe"}) {
      const YAML::Node p = c[probe];
      ASSERT_TRUE(p.IsMap()) << probe;
      YAML::Node port = p["httpGet"] ? p["httpGet"]["port"] : p["tcpSocket"]["port"];
      ASSERT_TRUE(port.IsScalar()) << probe << " needs httpGet or tcpSocket";
      std::string port_name = port.as<std::string>();
      int n = 0;
      EXPECT_TRUE(ports_of[name].count(port_name) || (absl::SimpleAtoi(port_name, &n) && n > 0))
          << probe << " port " << port_name;
      if (p["httpGet"]) {
        EXPECT_EQ(p["httpGet"]["path"].as<std::string>(""), "/metrics");
      }
    }
    for (const char* r : {"cpu", "memory"})
      EXPECT_FALSE(c["resources"]["requests"][r].as<std::string>("").empty()) << "resources.requests." << r;
    // Secrets referenced exist, with the key.
    for (const auto& e : c["env"]) {
      const YAML::Node ref = e["valueFrom"]["secretKeyRef"];
      if (!ref) continue;
      std::string secret = ref["name"].as<std::string>(""), key = ref["key"].as<std::string>("");
      EXPECT_TRUE(secrets.count(secret) && secrets[secret].count(key)) << "secret " << secret << " key " << key;
    }
  }

  // The coordinator: gRPC on the grpc port, the database URL from a Secret.
  {
    const YAML::Node c = deployments["dualswarm-coordinator"]->node["spec"]["template"]["spec"]["containers"][0];
    const auto& args = args_of["dualswarm-coordinator"];
    EXPECT_EQ(PortOf(ArgValue(args, "--listen")), ports_of["dualswarm-coordinator"]["grpc"]);
    bool url_from_secret = false;
    for (const auto& e : c["env"])
      if (e["name"].as<std::string>("") == "FLAGS_database_url" && e["valueFrom"]["secretKeyRef"])
        url_from_secret = true;
    EXPECT_TRUE(url_from_secret) << "FLAGS_database_url from a secretKeyRef";
    EXPECT_TRUE(std::find(args.begin(), args.end(), "--fromenv=database_url") != args.end());
    EXPECT_EQ(ArgValue(args, "--database-url"), "") << "no database URL in plain args";
  }

  // The worker: token from a Secret, the coordinator Service's address, a
  // grace period longer than the drain.
  {
    const YAML::Node pod = deployments["dualswarm-worker"]->node["spec"]["template"]["spec"];
    const auto& args = args_of["dualswarm-worker"];
    bool token_from_secret = false;
    for (const auto& e : pod["containers"][0]["env"])
      if (e["name"].as<std::string>("") == "DUALSWARM_TOKEN" && e["valueFrom"]["secretKeyRef"])
        token_from_secret = true;
    EXPECT_TRUE(token_from_secret) << "DUALSWARM_TOKEN from a secretKeyRef";
    EXPECT_EQ(ArgValue(args, "--token"), "") << "no token in plain args";
    std::string coordinator = ArgValue(args, "--coordinator");
    EXPECT_TRUE(absl::StartsWith(coordinator, "dualswarm-coordinator.")) << coordinator;
    int grpc_port = 0;
    for (const auto& p : services["dualswarm-coordinator"]->node["spec"]["ports"])
      if (p["name"].as<std::string>("") == "grpc") grpc_port = p["port"].as<int>(0);
    EXPECT_EQ(PortOf(coordinator), grpc_port);
    double drain = 30;
    if (std::string d = ArgValue(args, "--drain-seconds"); !d.empty()) {
      ASSERT_TRUE(absl::SimpleAtod(d, &drain));
    }
    EXPECT_GT(pod["terminationGracePeriodSeconds"].as<double>(0), drain + 15);
  }

  // Services select a Deployment's pods and name ports it has.
  for (const auto& [name, s] : services) {
    SCOPED_TRACE("Service " + name);
    auto selector = StringMap(s->node["spec"]["selector"]);
    ASSERT_FALSE(selector.empty());
    const K8sObject* target = nullptr;
    for (const auto& [dname, d] : deployments)
      if (Subset(selector, StringMap(d->node["spec"]["template"]["metadata"]["labels"]))) target = d;
    ASSERT_NE(target, nullptr) << "the selector matches no Deployment's pod labels";
    std::set<std::string> names;
    for (const auto& p : s->node["spec"]["ports"]) {
      names.insert(p["name"].as<std::string>(""));
      std::string tp = p["targetPort"].as<std::string>("");
      EXPECT_TRUE(ports_of[target->name()].count(tp)) << "targetPort " << tp;
    }
    if (name == "dualswarm-coordinator") {
      EXPECT_EQ(names, (std::set<std::string>{"grpc", "http", "metrics"}));  // API, web UI + JSON, /metrics
    }
  }

  // The autoscaler scales the worker Deployment.
  const YAML::Node hpa = hpas.begin()->second->node["spec"];
  EXPECT_EQ(hpa["scaleTargetRef"]["kind"].as<std::string>(""), "Deployment");
  EXPECT_EQ(hpa["scaleTargetRef"]["apiVersion"].as<std::string>(""), "apps/v1");
  EXPECT_EQ(hpa["scaleTargetRef"]["name"].as<std::string>(""), "dualswarm-worker");
  EXPECT_GE(hpa["minReplicas"].as<int>(0), 1);
  EXPECT_GE(hpa["maxReplicas"].as<int>(0), hpa["minReplicas"].as<int>(0));
  EXPECT_TRUE(hpa["metrics"].IsSequence() && hpa["metrics"].size() >= 1);
  // The resource the autoscaler measures has requests on the worker.
  for (const auto& m : hpa["metrics"])
    if (m["type"].as<std::string>("") == "Resource") {
      std::string r = m["resource"]["name"].as<std::string>("");
      EXPECT_FALSE(deployments["dualswarm-worker"]
                       ->node["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"][r]
                       .as<std::string>("")
                       .empty())
          << "the HPA scales on " << r << " but the worker requests none";
    }
}

}  // namespace
