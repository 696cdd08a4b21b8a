#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "expression_scope.h"

using rw::cli::NameMeaning;
using rw::cli::names_in;
using rw::cli::parse_info_address;

namespace {

std::vector<std::string> names(const std::string& expr)
{
    std::vector<std::string> out;
    for (const auto& n : names_in(expr))
        out.push_back(n.name);
    return out;
}

} // namespace

TEST_CASE("the names an expression resolves in a scope")
{
    CHECK(names("flag") == std::vector<std::string>{"flag"});
    CHECK(names("list_len(head) > 300") == std::vector<std::string>{"list_len", "head"});
    // Members, qualified names, convenience variables and keywords are not.
    CHECK(names("g->nodes[i].n_out + s.len") == std::vector<std::string>{"g", "i", "s"});
    CHECK(names("::flag + 'prog.c'::count + ns::x + main::calls") == std::vector<std::string>{});
    CHECK(names("$rip + $1 + x") == std::vector<std::string>{"x"});
    CHECK(names("sizeof(struct node) * n + (unsigned long) p") == std::vector<std::string>{"n", "p"});
    // Numbers and literals hold no names.
    CHECK(names("0x1f + 1e5 + 2.5f + n") == std::vector<std::string>{"n"});
    CHECK(names("strcmp(name, \"flag x\") == 0 && c == 'y'") == std::vector<std::string>{"strcmp", "name", "c"});
    CHECK(names("*p@10") == std::vector<std::string>{"p"});
}

TEST_CASE("where each name is in the expression")
{
    // (Each occurrence: the search pins every one of a global.)
    auto found = names_in("a + b->a + a");
    REQUIRE(found.size() == 3);
    CHECK(found[0].at == 0);
    CHECK(found[1].at == 4);
    CHECK(found[2].at == 11);
}

TEST_CASE("what gdb's info address says a name is")
{
    NameMeaning m = parse_info_address("flag", "Symbol \"flag\" is static storage at address 0x55555555801c.\n");
    CHECK(m.kind == NameMeaning::Kind::Static);
    CHECK(m.address == 0x55555555801cull);
    CHECK(parse_info_address("flag", "Symbol \"flag\" is a complex DWARF expression:\n     0: DW_OP_fbreg -36\n.\n")
              .kind == NameMeaning::Kind::Local);
    CHECK(parse_info_address("r", "Symbol \"r\" is a variable in $rbx.\n").kind == NameMeaning::Kind::Local);
    CHECK(parse_info_address("x", "Symbol \"x\" is a variable at frame base reg $rbp offset 16+-20.\n").kind ==
          NameMeaning::Kind::Local);
    CHECK(parse_info_address("f", "Symbol \"f\" is a function at address 0x555555555139.\n").kind ==
          NameMeaning::Kind::Other);
    CHECK(parse_info_address("printf", "Symbol \"printf\" is at 0x7ffff7e255b0 in a file compiled without "
                                       "debugging.\n")
              .kind == NameMeaning::Kind::Other);
    CHECK(parse_info_address("nosuch", "No symbol \"nosuch\" in current context.").kind == NameMeaning::Kind::Other);
    CHECK(parse_info_address("RED", "Symbol \"RED\" is constant.\n").kind == NameMeaning::Kind::Other);
}
