// Lease benchmark: how many jobs per second the coordinator hands out and
// takes back (LeaseJobs + CompleteJob over real gRPC), and how long LeaseJobs
// takes, with 1, 4 and 16 worker client processes.
//
//   lease_bench --coordinator BIN [--clients 1,4,16] [--max-jobs 1,8]
//               [--seconds 8] [--jobs 30000] [--reps 1]
//   lease_bench client ADDR TOKEN START_NS END_NS MAX_JOBS OUT   (internal)
//
// The parent starts BIN on an embedded PostgreSQL in a temporary directory,
// makes admin and worker tokens, stores specs/kv.dspec and a target, then for
// each (max_jobs, clients) pair submits a run of --jobs jobs and spawns that
// many client processes (this binary in client mode). Each client registers,
// waits for a common start time, then loops LeaseJobs(max_jobs, wait_ms=1000)
// -> CompleteJob(PASSED) for every leased job until the end time, and writes
// its completions and per-call latencies to OUT. The parent prints one
// Markdown table row per pair: completions per second inside the window, the
// LeaseJobs latency percentiles (calls that returned jobs) and the
// CompleteJob latency. The run is cancelled before the next pair starts.
// With --reps N each pair is measured N times and the repetition with the
// median throughput is shown (the machine may be shared). The CPU columns
// say what a job costs the coordinator, its PostgreSQL and the clients
// inside the window, and so how many jobs/s two idle cores would sustain:
// a figure other jobs on the machine hardly change. The last lines say
// whether the target (>= 1000 jobs/s and p99 LeaseJobs < 20 ms) was met for
// each client count, per max_jobs.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "dualswarm/v1/run.grpc.pb.h"
#include "dualswarm/v1/spec.grpc.pb.h"
#include "dualswarm/v1/target.grpc.pb.h"
#include "dualswarm/v1/worker.grpc.pb.h"
#include "tests/common/processes.h"
#include "workers/daemon/spec_cache.h"

namespace {

namespace v1 = ::dualswarm::v1;
using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC: the same in every process

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token, int seconds = 30) {
  return dualswarm::testing::AuthContext(token, std::chrono::seconds(seconds));
}

// ------------------------------------------------------------------ client

int Client(const std::string& addr, const std::string& token, int64_t start_ns, int64_t end_ns, int max_jobs,
           const std::string& out_path) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection of our own
  auto channel = grpc::CreateCustomChannel(addr, grpc::InsecureChannelCredentials(), args);
  auto workers = v1::WorkerService::NewStub(channel);
  v1::RegisterWorkerRequest rreq;
  rreq.set_name(absl::StrCat("lease-bench-", getpid()));
  rreq.set_slots(max_jobs);
  rreq.add_adapters("jsonl");
  v1::RegisterWorkerResponse reg;
  grpc::Status st = workers->Register(Ctx(token).get(), rreq, &reg);
  if (!st.ok()) {
    std::cerr << "lease_bench client: Register: " << st.error_message() << "\n";
    return 1;
  }
  bool late = NowNs() > start_ns;
  while (NowNs() < start_ns) std::this_thread::sleep_for(std::chrono::microseconds(200));

  std::vector<int64_t> lease_us;     // calls that returned jobs
  std::vector<int64_t> complete_us;  // every CompleteJob
  int64_t completed = 0, errors = 0, empty = 0;
  v1::LeaseJobsRequest lreq;
  lreq.set_worker_id(reg.worker_id());
  lreq.set_max_jobs(max_jobs);
  lreq.set_wait_ms(1000);
  // Like dualswarm-worker: list the spec versions held, so their sources
  // are not sent again.
  dualswarm::workers::SpecSourceCache spec_sources;
  while (NowNs() < end_ns) {
    v1::LeaseJobsResponse leased;
    lreq.clear_known_spec_hashes();
    for (const std::string& hash : spec_sources.Known()) lreq.add_known_spec_hashes(hash);
    int64_t t0 = NowNs();
    st = workers->LeaseJobs(Ctx(token, 10).get(), lreq, &leased);
    if (st.ok() && !spec_sources.Fill(&leased).empty()) {
      std::cerr << "lease_bench client: a job came without its spec source\n";
      ++errors;
    }
    int64_t t1 = NowNs();
    if (!st.ok()) {
      ++errors;
      std::cerr << "lease_bench client: LeaseJobs: " << st.error_message() << "\n";
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    if (leased.jobs_size() == 0) {
      ++empty;
      continue;
    }
    lease_us.push_back((t1 - t0) / 1000);
    for (const auto& j : leased.jobs()) {
      v1::CompleteJobRequest c;
      c.set_worker_id(reg.worker_id());
      c.set_job_id(j.job_id());
      c.set_lease_token(j.lease_token());
      c.set_outcome(v1::JOB_OUTCOME_PASSED);
      c.set_seconds(0.001);
      v1::CompleteJobResponse cr;
      int64_t c0 = NowNs();
      st = workers->CompleteJob(Ctx(token).get(), c, &cr);
      complete_us.push_back((NowNs() - c0) / 1000);
      if (!st.ok()) {
        ++errors;
        std::cerr << "lease_bench client: CompleteJob: " << st.error_message() << "\n";
      } else if (NowNs() <= end_ns) {
        ++completed;
      }
    }
  }
  std::ofstream out(out_path);
  out << completed << " " << errors << " " << empty << " " << (late ? 1 : 0) << " " << lease_us.size() << "\n";
  for (int64_t us : lease_us) out << us << "\n";
  for (int64_t us : complete_us) out << us << "\n";
  return out.good() ? 0 : 1;
}

// ------------------------------------------------------------------ parent

struct Options {
  std::string coordinator;
  std::vector<int> clients = {1, 4, 16};
  std::vector<int> max_jobs = {1, 8};
  int seconds = 8;
  int jobs = 30000;
  int reps = 1;
};

// CPU seconds (user + system) used so far by a process, and by the direct
// children of one (PostgreSQL's backends are children of the postmaster).
struct Cpu {
  double coordinator = 0, postgres = 0, clients = 0;
};

bool ProcStat(const std::string& pid, pid_t* ppid, double* cpu) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = text.rfind(')');
  if (paren == std::string::npos) return false;
  std::vector<std::string> f = absl::StrSplit(text.substr(paren + 2), ' ');
  int64_t parent = 0, utime = 0, stime = 0;
  if (f.size() < 13 || !absl::SimpleAtoi(f[1], &parent) || !absl::SimpleAtoi(f[11], &utime) ||
      !absl::SimpleAtoi(f[12], &stime))
    return false;
  *ppid = static_cast<pid_t>(parent);
  *cpu = static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  return true;
}

Cpu SampleCpu(pid_t coordinator, pid_t postmaster, const std::vector<pid_t>& clients) {
  Cpu c;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::string name = e.path().filename().string();
    int64_t pid = 0;
    pid_t ppid = 0;
    double cpu = 0;
    if (!absl::SimpleAtoi(name, &pid) || !ProcStat(name, &ppid, &cpu)) continue;
    if (pid == coordinator)
      c.coordinator += cpu;
    else if (pid == postmaster || (postmaster > 0 && ppid == postmaster))
      c.postgres += cpu;
    else if (std::find(clients.begin(), clients.end(), pid) != clients.end())
      c.clients += cpu;
  }
  return c;
}

// One measurement of a (max_jobs, clients) pair.
struct Sample {
  Cpu cpu;  // used inside the window
  double rate = 0;
  std::vector<int64_t> lease_us, complete_us;  // sorted
  int64_t errors = 0, empty = 0, late = 0;
  bool ok = true;
};

std::vector<int> ParseInts(const std::string& s) {
  std::vector<int> out;
  for (absl::string_view part : absl::StrSplit(s, ',', absl::SkipEmpty())) {
    int v = 0;
    if (absl::SimpleAtoi(part, &v) && v > 0) out.push_back(v);
  }
  return out;
}

// Jobs per second that 2 otherwise idle cores could sustain at this CPU cost.
double Capacity(const Cpu& ms_per_job) {
  double ms = ms_per_job.coordinator + ms_per_job.postgres + ms_per_job.clients;
  return ms > 0 ? 2000.0 / ms : 0;
}

double Percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return static_cast<double>(sorted[std::min(i, sorted.size() - 1)]) / 1000.0;
}

int Parent(const Options& o, const std::string& self) {
  std::string tmp = dualswarm::testing::MakeTempDir("ds-lease-bench");
  if (tmp.empty()) {
    std::cerr << "lease_bench: cannot make a temporary directory\n";
    return 1;
  }
  int rc = 0;
  {
    dualswarm::testing::CoordinatorProcess coord(
        dualswarm::testing::CoordinatorProcess::Options{o.coordinator, tmp, "", {}, 0});
    std::string err = coord.Start();
    if (!err.empty()) {
      std::cerr << "lease_bench: " << err << "\n";
      return 1;
    }
    std::string admin = coord.Token("admin"), worker = coord.Token("worker");
    if (admin.empty() || worker.empty()) {
      std::cerr << "lease_bench: token create failed\n";
      return 1;
    }
    auto channel = coord.channel();
    auto specs = v1::SpecService::NewStub(channel);
    auto targets = v1::TargetService::NewStub(channel);
    auto runs = v1::RunService::NewStub(channel);
    v1::CreateSpecRequest sreq;
    sreq.set_file_name("kv.dspec");
    sreq.set_source(dualswarm::testing::Slurp(std::string(DUALSWARM_SOURCE_DIR) + "/specs/kv.dspec"));
    v1::CreateSpecResponse spec;
    grpc::Status st = specs->Create(Ctx(admin).get(), sreq, &spec);
    v1::CreateTargetRequest treq;
    treq.mutable_target()->set_name("bench");
    treq.mutable_target()->set_adapter("jsonl");
    treq.mutable_target()->set_address("127.0.0.1:9");
    v1::Target target;
    if (st.ok()) st = targets->Create(Ctx(admin).get(), treq, &target);
    if (!st.ok()) {
      std::cerr << "lease_bench: setup: " << st.error_message() << "\n";
      return 1;
    }

    auto measure = [&](int max_jobs, int n, int rep) -> Sample {
      Sample out;
      v1::SubmitRunRequest rreq;
      rreq.mutable_template_()->set_spec_hash(spec.spec().hash());
      rreq.mutable_template_()->set_target_id(target.id());
      rreq.mutable_template_()->set_jobs(o.jobs);
      rreq.mutable_template_()->set_seed(1);
      v1::Run run;
      grpc::Status st = runs->Submit(Ctx(admin, 120).get(), rreq, &run);
      if (!st.ok()) {
        std::cerr << "lease_bench: Submit: " << st.error_message() << "\n";
        out.ok = false;
        return out;
      }
      // Room for n processes to start, connect and register on 2 busy cores.
      int64_t start = NowNs() + 2'000'000'000LL + 150'000'000LL * n;
      int64_t end = start + o.seconds * 1'000'000'000LL;
      std::vector<pid_t> pids;
      std::vector<std::string> outs;
      for (int i = 0; i < n; ++i) {
        outs.push_back(absl::StrCat(tmp, "/client-", max_jobs, "-", n, "-", rep, "-", i, ".out"));
        pids.push_back(dualswarm::testing::Spawn({self, "client", coord.address(), worker, std::to_string(start),
                                                  std::to_string(end), std::to_string(max_jobs), outs.back()},
                                                 tmp + "/clients.log"));
      }
      // CPU used inside the window by the coordinator, its PostgreSQL (a
      // backend that exits inside the window is missed: none should) and
      // the clients: unlike wall-clock rates, barely changed by other jobs
      // sharing the cores.
      int64_t postmaster = 0;
      {
        std::ifstream pidfile(tmp + "/data/pg/postmaster.pid");
        pidfile >> postmaster;
      }
      auto sleep_until = [](int64_t ns) {
        while (NowNs() < ns) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      };
      sleep_until(start);
      Cpu c0 = SampleCpu(coord.pid(), static_cast<pid_t>(postmaster), pids);
      sleep_until(end);
      Cpu c1 = SampleCpu(coord.pid(), static_cast<pid_t>(postmaster), pids);
      out.cpu = {c1.coordinator - c0.coordinator, c1.postgres - c0.postgres, c1.clients - c0.clients};
      for (pid_t pid : pids) {
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
          out.ok = false;
      }
      int64_t completed = 0;
      for (const auto& path : outs) {
        std::ifstream in(path);
        int64_t c = 0, e = 0, z = 0, l = 0, nl = 0;
        if (!(in >> c >> e >> z >> l >> nl)) {
          out.ok = false;
          continue;
        }
        completed += c;
        out.errors += e;
        out.empty += z;
        out.late += l;
        for (int64_t us, k = 0; in >> us; ++k) (k < nl ? out.lease_us : out.complete_us).push_back(us);
      }
      std::sort(out.lease_us.begin(), out.lease_us.end());
      std::sort(out.complete_us.begin(), out.complete_us.end());
      out.rate = static_cast<double>(completed) / o.seconds;
      if (completed > 0) {
        out.cpu.coordinator *= 1000.0 / completed;  // ms per job
        out.cpu.postgres *= 1000.0 / completed;
        out.cpu.clients *= 1000.0 / completed;
      }
      v1::CancelRunRequest creq;
      creq.set_id(run.id());
      (void)runs->Cancel(Ctx(admin, 120).get(), creq, &run);
      return out;
    };

    std::cout << "| max_jobs | clients | jobs/s | lease calls | lease p50 ms | p90 ms | p99 ms | max ms |"
                 " complete p50 ms | complete p99 ms | errors | empty leases |"
                 " CPU ms/job coord / pg / clients | jobs/s per 2 free cores |\n"
              << "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
    std::string verdicts;
    for (int max_jobs : o.max_jobs) {
      std::string verdict;
      for (int n : o.clients) {
        std::vector<Sample> samples;
        for (int rep = 0; rep < o.reps; ++rep) samples.push_back(measure(max_jobs, n, rep));
        std::sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) { return a.rate < b.rate; });
        const Sample& m = samples[samples.size() / 2];
        bool ok = std::all_of(samples.begin(), samples.end(), [](const Sample& s) { return s.ok; });
        const auto& lat = m.lease_us;
        std::cout << absl::StrFormat(
                         "| %d | %d | %.0f | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %d | %d |"
                         " %.2f / %.2f / %.2f | %.0f |%s\n",
                         max_jobs, n, m.rate, lat.size(), Percentile(lat, 0.5), Percentile(lat, 0.9),
                         Percentile(lat, 0.99), lat.empty() ? 0.0 : lat.back() / 1000.0, Percentile(m.complete_us, 0.5),
                         Percentile(m.complete_us, 0.99), m.errors, m.empty, m.cpu.coordinator, m.cpu.postgres,
                         m.cpu.clients, Capacity(m.cpu),
                         ok ? (m.late ? " (some clients started late)" : "") : " CLIENT FAILURE (see clients.log)")
                  << std::flush;
        if (!ok) rc = 1;
        bool met = m.rate >= 1000 && Percentile(lat, 0.99) < 20;
        absl::StrAppend(&verdict, verdict.empty() ? "" : "; ", n, " client(s): ", met ? "met" : "NOT met",
                        absl::StrFormat(" (%.0f jobs/s, p99 %.1f ms)", m.rate, Percentile(lat, 0.99)));
      }
      absl::StrAppend(&verdicts, "\nTarget >= 1000 jobs/s with p99 LeaseJobs < 20 ms (max_jobs=", max_jobs,
                      o.reps > 1 ? absl::StrCat(", median of ", o.reps, " runs") : std::string(), "): ", verdict, "\n");
    }
    std::cout << verdicts;
    if (rc != 0) std::cerr << dualswarm::testing::Slurp(tmp + "/clients.log");
    coord.Stop();
  }
  std::error_code ec;
  std::filesystem::remove_all(tmp, ec);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "client") {
    int64_t start = 0, end = 0;
    int max_jobs = 0;
    if (argc != 8 || !absl::SimpleAtoi(argv[4], &start) || !absl::SimpleAtoi(argv[5], &end) ||
        !absl::SimpleAtoi(argv[6], &max_jobs)) {
      std::cerr << "lease_bench client ADDR TOKEN START_NS END_NS MAX_JOBS OUT\n";
      return 2;
    }
    return Client(argv[2], argv[3], start, end, max_jobs, argv[7]);
  }
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--coordinator")
      o.coordinator = next();
    else if (a == "--clients")
      o.clients = ParseInts(next());
    else if (a == "--max-jobs")
      o.max_jobs = ParseInts(next());
    else if (a == "--seconds")
      o.seconds = std::max(1, std::atoi(next().c_str()));
    else if (a == "--jobs")
      o.jobs = std::max(1, std::atoi(next().c_str()));
    else if (a == "--reps")
      o.reps = std::max(1, std::atoi(next().c_str()));
    else {
      std::cerr << "usage: lease_bench --coordinator BIN [--clients 1,4,16] [--max-jobs 1,8]"
                   " [--seconds 8] [--jobs 30000] [--reps 1]\n";
      return 2;
    }
  }
  if (o.coordinator.empty() || o.clients.empty() || o.max_jobs.empty()) {
    std::cerr << "lease_bench: --coordinator BIN is required\n";
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  return Parent(o, self);
}
