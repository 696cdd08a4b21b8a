#include "gdb_mi.h"

#include "steady_now.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace rw::cli {

const MiValue* MiValue::get(const std::string& name) const
{
    for (const auto& [k, v] : items)
        if (k == name)
            return &v;
    return nullptr;
}

std::string MiValue::str(const std::string& name, const std::string& otherwise) const
{
    const MiValue* v = get(name);
    return v && v->kind == Kind::String ? v->text : otherwise;
}

std::string mi_quote(const std::string& s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + "\"";
}

bool is_parse_error(const std::string& e)
{
    for (const char* parse : {"syntax error", "Invalid character", "Invalid number", "Unmatched"})
        if (e.find(parse) != std::string::npos)
            return true;
    return false;
}

std::string last_json_line(const std::string& console)
{
    std::string json;
    size_t start = 0;
    while (start < console.size()) {
        size_t end = console.find('\n', start);
        std::string line = console.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (!line.empty() && line[0] == '{')
            json = line;
        if (end == std::string::npos)
            break;
        start = end + 1;
    }
    return json;
}

std::string parse_mi_cstring(const std::string& s, size_t& pos)
{
    if (pos >= s.size() || s[pos] != '"')
        throw std::runtime_error("gdb/mi: expected a string at: " + s.substr(pos, 40));
    std::string out;
    for (pos++; pos < s.size(); pos++) {
        char c = s[pos];
        if (c == '"') {
            pos++;
            return out;
        }
        if (c != '\\') {
            out += c;
            continue;
        }
        if (++pos >= s.size())
            break;
        c = s[pos];
        switch (c) {
        case 'n':
            out += '\n';
            break;
        case 't':
            out += '\t';
            break;
        case 'r':
            out += '\r';
            break;
        case 'e':
            out += '\x1b';
            break;
        case '0':
        case '1':
        case '2':
        case '3': {
            int v = 0, n = 0;
            while (n < 3 && pos < s.size() && s[pos] >= '0' && s[pos] <= '7') {
                v = v * 8 + (s[pos] - '0');
                pos++;
                n++;
            }
            pos--;
            out += static_cast<char>(v);
            break;
        }
        default:
            out += c;
        }
    }
    throw std::runtime_error("gdb/mi: unterminated string");
}

namespace {

MiValue parse_value(const std::string& s, size_t& pos);

std::string parse_name(const std::string& s, size_t& pos)
{
    size_t start = pos;
    while (pos < s.size() && s[pos] != '=' && s[pos] != ',' && s[pos] != '}' && s[pos] != ']')
        pos++;
    return s.substr(start, pos - start);
}

MiValue parse_value(const std::string& s, size_t& pos)
{
    if (pos >= s.size())
        throw std::runtime_error("gdb/mi: value expected");
    MiValue v;
    if (s[pos] == '"') {
        v.text = parse_mi_cstring(s, pos);
        return v;
    }
    char open = s[pos], close = open == '{' ? '}' : ']';
    if (open != '{' && open != '[')
        throw std::runtime_error("gdb/mi: unexpected value at: " + s.substr(pos, 40));
    v.kind = open == '{' ? MiValue::Kind::Tuple : MiValue::Kind::List;
    pos++;
    while (pos < s.size() && s[pos] != close) {
        std::string name;
        if (s[pos] != '"' && s[pos] != '{' && s[pos] != '[') {
            name = parse_name(s, pos);
            if (pos >= s.size() || s[pos] != '=')
                throw std::runtime_error("gdb/mi: '=' expected after " + name);
            pos++;
        }
        v.items.emplace_back(name, parse_value(s, pos));
        if (pos < s.size() && s[pos] == ',')
            pos++;
    }
    pos++; // the closing bracket
    return v;
}

} // namespace

MiValue parse_mi_results(const std::string& s, size_t& pos)
{
    MiValue tuple;
    tuple.kind = MiValue::Kind::Tuple;
    while (pos < s.size() && s[pos] == ',') {
        pos++;
        std::string name = parse_name(s, pos);
        if (pos >= s.size() || s[pos] != '=')
            throw std::runtime_error("gdb/mi: '=' expected after " + name);
        pos++;
        tuple.items.emplace_back(name, parse_value(s, pos));
    }
    return tuple;
}

GdbMi::GdbMi(const std::string& gdb, const std::vector<std::string>& args)
{
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
        throw std::system_error(errno, std::generic_category(), "pipe");
    std::vector<std::string> argv = {gdb, "--interpreter=mi3", "-nx", "-q"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv)
        cargv.push_back(a.data());
    cargv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ < 0)
        throw std::system_error(errno, std::generic_category(), "fork");
    if (pid_ == 0) {
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::setpgid(0, 0); // a ^C at the terminal is rewind's to handle
        ::execv(gdb.c_str(), cargv.data());
        ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_gdb_ = in[1];
    from_gdb_ = out[0];
    // Up to the first prompt.
    for (;;) {
        auto line = read_line();
        if (!line)
            throw std::runtime_error("gdb (" + gdb + ") did not start");
        if (line->rfind("(gdb)", 0) == 0)
            break;
    }
}

GdbMi::~GdbMi()
{
    if (to_gdb_ >= 0) {
        const char quit[] = "-gdb-exit\n";
        if (::write(to_gdb_, quit, sizeof(quit) - 1) < 0) {
        }
        ::close(to_gdb_);
    }
    if (from_gdb_ >= 0)
        ::close(from_gdb_);
    if (pid_ > 0) {
        int status;
        for (int i = 0; i < 100; i++) {
            if (::waitpid(pid_, &status, WNOHANG) == pid_)
                return;
            ::usleep(20000);
        }
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
    }
}

std::optional<std::string> GdbMi::read_line()
{
    // Lines are taken from the front without moving the rest each time: a
    // long reply comes as thousands of stream records.
    size_t scanned = head_;
    for (;;) {
        size_t nl = buffer_.find('\n', scanned);
        if (nl != std::string::npos) {
            std::string line = buffer_.substr(head_, nl - head_);
            head_ = nl + 1;
            if (head_ > (1u << 16) && head_ * 2 > buffer_.size()) {
                buffer_.erase(0, head_);
                head_ = 0;
            }
            if (!line.empty() && line.back() == '\r')
                line.pop_back();
            return line;
        }
        scanned = buffer_.size();
        char buf[65536];
        ssize_t n = ::read(from_gdb_, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return std::nullopt;
        buffer_.append(buf, static_cast<size_t>(n));
    }
}

MiResult GdbMi::command(const std::string& mi_command)
{
    static const bool trace = std::getenv("REWIND_DEBUG") != nullptr;
    if (trace)
        std::fprintf(stderr, "[gdb/mi] <- %s\n", mi_command.c_str());
    auto sent = steady_now();
    std::string token = std::to_string(token_++);
    std::string line = token + mi_command + "\n";
    for (size_t done = 0; done < line.size();) {
        ssize_t n = ::write(to_gdb_, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            throw std::runtime_error("gdb went away");
        done += static_cast<size_t>(n);
    }
    MiResult result;
    for (;;) {
        auto l = read_line();
        if (!l)
            throw std::runtime_error("gdb went away while running: " + mi_command);
        const std::string& s = *l;
        if (s.empty() || s.rfind("(gdb)", 0) == 0)
            continue;
        if (s[0] == '~' || s[0] == '@' || s[0] == '&') {
            size_t pos = 1;
            result.console += parse_mi_cstring(s, pos);
            continue;
        }
        if (s.rfind(token + "^", 0) == 0) {
            size_t pos = token.size() + 1;
            size_t end = s.find(',', pos);
            result.result_class = s.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
            pos = end == std::string::npos ? s.size() : end;
            result.values = parse_mi_results(s, pos);
            if (trace)
                std::fprintf(stderr, "[gdb/mi] -> %.1f ms %s%s\n",
                             std::chrono::duration<double, std::milli>(steady_now() - sent).count(),
                             s.substr(token.size()).c_str(),
                             result.console.empty() ? "" : (" | " + result.console.substr(0, 200)).c_str());
            return result;
        }
        // Async records (=thread-created, *stopped…) are not needed here.
    }
}

MiResult GdbMi::console(const std::string& cli_command)
{
    std::string quoted = "\"";
    for (char c : cli_command) {
        if (c == '"' || c == '\\')
            quoted += '\\';
        quoted += c;
    }
    quoted += '"';
    return command("-interpreter-exec console " + quoted);
}

} // namespace rw::cli
