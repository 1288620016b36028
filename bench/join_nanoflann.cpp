// bench/join_nanoflann.cpp: the nanoflann peer of bench/join.py.
//
// An epsilon self-join with nanoflann's KDTreeSingleIndexAdaptor: one
// radiusSearch per point (OpenMP over queries), gathered into a full CSR
// result (offsets (n+1) int64, neighbour indices int64) in memory.
//
//   join_nanoflann DATA.npy|RAW --eps E [--dims D] [--threads T] [--leaf L]
//                  [--sort] [--hash]
//
// DATA is a .npy float64 (n, d) C-order array, or raw little-endian float64
// with --dims D. Pairs are inclusive (dist^2 <= eps^2): nanoflann's
// RadiusResultSet keeps dist < radius, so the radius handed to it is the next
// double above eps^2. Self pairs (i, i) are included. --sort sorts each
// query's neighbours by index (nanoflann's own order is the tree order);
// --hash adds an order-independent hash of the pair set (untimed), the same
// one bench/join.py computes for the other tools.
//
// Prints one JSON line: n, d, threads, leaf, build_seconds, search_seconds
// (search + CSR assembly), seconds (build + search), pairs, peak_rss_bytes,
// and pairs_hash with --hash.
//
// Built by bench/join.py (g++ -O3 -fopenmp); nanoflann comes from Debian's
// libnanoflann-dev.
#include <nanoflann.hpp>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const std::string &msg)
{
    std::fprintf(stderr, "join_nanoflann: %s\n", msg.c_str());
    std::exit(1);
}

struct Cloud {
    std::vector<double> x;
    size_t n = 0, d = 0;
    size_t kdtree_get_point_count() const { return n; }
    double kdtree_get_pt(size_t i, size_t k) const { return x[i * d + k]; }
    template <class BBox> bool kdtree_get_bbox(BBox &) const { return false; }
};

// Reads a .npy float64 C-order 2-D array, or raw float64 with dims given.
Cloud load(const std::string &path, size_t dims)
{
    std::ifstream f(path, std::ios::binary);
    if (!f) die(path + ": cannot open");
    Cloud c;
    char magic[6];
    f.read(magic, 6);
    if (f && std::memcmp(magic, "\x93NUMPY", 6) == 0) {
        unsigned char ver[2];
        f.read(reinterpret_cast<char *>(ver), 2);
        uint32_t hlen = 0;
        if (ver[0] == 1) {
            unsigned char b[2];
            f.read(reinterpret_cast<char *>(b), 2);
            hlen = b[0] | (b[1] << 8);
        } else {
            unsigned char b[4];
            f.read(reinterpret_cast<char *>(b), 4);
            hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
        }
        std::string h(hlen, '\0');
        f.read(&h[0], hlen);
        if (h.find("'<f8'") == std::string::npos) die(path + ": .npy must be float64 ('<f8')");
        if (h.find("'fortran_order': False") == std::string::npos) die(path + ": .npy must be C order");
        size_t p = h.find("'shape': (");
        if (p == std::string::npos) die(path + ": no shape in .npy header");
        if (std::sscanf(h.c_str() + p + 10, "%zu, %zu", &c.n, &c.d) != 2) die(path + ": .npy must be 2-D");
    } else {
        if (dims == 0) die(path + ": not .npy; raw float64 needs --dims D");
        f.clear();
        f.seekg(0, std::ios::end);
        size_t bytes = size_t(f.tellg());
        f.seekg(0);
        c.d = dims;
        c.n = bytes / (8 * dims);
        if (c.n * 8 * dims != bytes) die(path + ": size is not a multiple of 8 * dims");
    }
    c.x.resize(c.n * c.d);
    f.read(reinterpret_cast<char *>(c.x.data()), std::streamsize(c.x.size() * 8));
    if (!f) die(path + ": short read");
    return c;
}

uint64_t splitmix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Result {
    double build = 0, search = 0;
    std::vector<int64_t> offsets, indices;
};

template <int DIM>
Result join(const Cloud &c, double eps, size_t leaf, bool sort_idx)
{
    using Tree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, Cloud>, Cloud, DIM,
                                                     uint32_t>;
    Result r;
    double t0 = now();
    Tree tree(int(c.d), c,
              nanoflann::KDTreeSingleIndexAdaptorParams(leaf, nanoflann::KDTreeSingleIndexAdaptorFlags::None));
    double t1 = now();
    r.build = t1 - t0;

    // Inclusive radius: RadiusResultSet keeps dist < radius.
    const double radius = std::nextafter(eps * eps, HUGE_VAL);
    const size_t n = c.n, block = 1024, nblocks = (n + block - 1) / block;
    std::vector<std::vector<uint32_t>> found(nblocks);
    r.offsets.assign(n + 1, 0);
    nanoflann::SearchParams params(32, 0.0f, false);
#pragma omp parallel
    {
        std::vector<std::pair<uint32_t, double>> hits;
        hits.reserve(1024);
#pragma omp for schedule(dynamic, 1)
        for (size_t b = 0; b < nblocks; b++) {
            std::vector<uint32_t> &out = found[b];
            size_t lo = b * block, hi = std::min(n, lo + block);
            for (size_t i = lo; i < hi; i++) {
                nanoflann::RadiusResultSet<double, uint32_t> rs(radius, hits);
                tree.radiusSearchCustomCallback(&c.x[i * c.d], rs, params);
                if (sort_idx)
                    std::sort(hits.begin(), hits.end(),
                              [](const std::pair<uint32_t, double> &a, const std::pair<uint32_t, double> &b2) {
                                  return a.first < b2.first;
                              });
                for (const auto &h : hits) out.push_back(h.first);
                r.offsets[i + 1] = int64_t(hits.size());
            }
        }
    }
    for (size_t i = 0; i < n; i++) r.offsets[i + 1] += r.offsets[i];
    r.indices.resize(size_t(r.offsets[n]));
#pragma omp parallel for schedule(dynamic, 16)
    for (size_t b = 0; b < nblocks; b++) {
        std::copy(found[b].begin(), found[b].end(), r.indices.begin() + r.offsets[b * block]);
        std::vector<uint32_t>().swap(found[b]);
    }
    r.search = now() - t1;
    return r;
}

}  // namespace

int main(int argc, char **argv)
{
    std::string path;
    double eps = -1;
    size_t dims = 0, leaf = 10;
    int threads = 1;
    bool sort_idx = false, hash = false;
    for (int a = 1; a < argc; a++) {
        std::string s = argv[a];
        auto next = [&]() -> const char * {
            if (a + 1 >= argc) die(s + " needs a value");
            return argv[++a];
        };
        if (s == "--eps") eps = std::atof(next());
        else if (s == "--dims") dims = std::strtoul(next(), nullptr, 10);
        else if (s == "--threads") threads = std::atoi(next());
        else if (s == "--leaf") leaf = std::strtoul(next(), nullptr, 10);
        else if (s == "--sort") sort_idx = true;
        else if (s == "--hash") hash = true;
        else if (!s.empty() && s[0] == '-') die("unknown option " + s);
        else path = s;
    }
    if (path.empty() || eps < 0) die("usage: join_nanoflann DATA --eps E [--dims D] [--threads T] [--leaf L] [--sort] [--hash]");
    if (threads > 0) omp_set_num_threads(threads);
    Cloud c = load(path, dims);
    if (c.n >= (size_t(1) << 32)) die("more than 2^32 points");

    Result r;
    switch (c.d) {
    case 2: r = join<2>(c, eps, leaf, sort_idx); break;
    case 3: r = join<3>(c, eps, leaf, sort_idx); break;
    default: r = join<-1>(c, eps, leaf, sort_idx); break;
    }

    std::string extra;
    if (hash) {
        uint64_t h = 0;
#pragma omp parallel for reduction(+ : h) schedule(static)
        for (size_t i = 0; i < c.n; i++)
            for (int64_t k = r.offsets[i]; k < r.offsets[i + 1]; k++)
                h += splitmix64(uint64_t(i) * uint64_t(c.n) + uint64_t(r.indices[size_t(k)]));
        char buf[64];
        std::snprintf(buf, sizeof buf, ", \"pairs_hash\": \"%016" PRIx64 "\"", h);
        extra = buf;
    }
    // VmHWM: ru_maxrss would carry the parent's peak over exec on Linux.
    long hwm_kib = 0;
    if (FILE *st = std::fopen("/proc/self/status", "r")) {
        char line[256];
        while (std::fgets(line, sizeof line, st))
            if (std::sscanf(line, "VmHWM: %ld", &hwm_kib) == 1) break;
        std::fclose(st);
    }
    std::printf("{\"tool\": \"nanoflann\", \"n\": %zu, \"d\": %zu, \"threads\": %d, \"leaf\": %zu, "
                "\"build_seconds\": %.6f, \"search_seconds\": %.6f, \"seconds\": %.6f, \"pairs\": %" PRId64
                ", \"peak_rss_bytes\": %ld%s}\n",
                c.n, c.d, omp_get_max_threads(), leaf, r.build, r.search, r.build + r.search, r.offsets[c.n],
                hwm_kib * 1024L, extra.c_str());
    return 0;
}
