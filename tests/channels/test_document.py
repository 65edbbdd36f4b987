"""Markdown read into atoms: block structure as text, marks, and where a cut may go."""

from __future__ import annotations

from learnloop.channels.document import Cut, Mark, read_markdown


def texts(markdown: str) -> str:
    return "".join(atom.text for atom in read_markdown(markdown))


def test_blocks_become_text_lines() -> None:
    assert texts("# Title\n\npara one\nsoft line") == "Title\n\npara one\nsoft line"
    assert texts("- a\n- b\n  1. c\n  2. d\n\nafter") == "• a\n• b\n  1. c\n  2. d\n\nafter"
    assert texts("3. three\n4. four") == "3. three\n4. four"
    assert texts("- - nested first") == "• \n  ◦ nested first"
    assert texts("| a | b |\n|---|---|\n| 1 | 2 |") == "a | b\n1 | 2"
    assert texts("---") == "———"


def test_marks_cover_their_words() -> None:
    atoms = read_markdown("**bold _both_** `code` [link](https://e.co)")
    marks = {atom.text: atom.marks for atom in atoms if not atom.text.isspace()}
    assert marks["bold"] == (Mark("bold"),)
    assert marks["both"] == (Mark("bold"), Mark("italic"))
    assert marks["code"] == (Mark("code"),)
    assert marks["link"] == (Mark("link", "https://e.co"),)
    assert read_markdown("<https://e.co>")[0].marks == (Mark("autolink", "https://e.co"),)


def test_a_heading_is_bold_and_a_quote_covers_its_paragraphs() -> None:
    assert all(a.marks == (Mark("bold"),) for a in read_markdown("## Two words") if not a.text.isspace())
    quoted = read_markdown("> one\n>\n> two\n\nout")
    assert [a.marks for a in quoted if a.text in ("one", "two", "\n\n")][:3] == [(Mark("quote"),)] * 3
    assert quoted[-1].marks == ()


def test_code_blocks_keep_their_lines_and_indentation() -> None:
    atoms = read_markdown("```py\ndef f():\n    return 1   \n\n```")
    assert "".join(a.text for a in atoms) == "def f():\n    return 1"
    assert all(a.marks == (Mark("pre", "py"),) for a in atoms)
    indentation = next(a for a in atoms if a.text == "    ")
    assert not indentation.space  # kept at the start of a part, unlike prose whitespace


def test_cut_levels_rank_paragraphs_lines_sentences_words() -> None:
    atoms = read_markdown("One two. Three\nfour\n\nfive 文字。更多")
    cut = {atom.text: atom.cut for atom in atoms if not atom.text.isspace()}
    assert cut["One"] == Cut.WORD
    assert cut["two."] == Cut.SENTENCE
    assert cut["Three"] == Cut.LINE
    assert cut["four"] == Cut.PARAGRAPH
    assert cut["文字。"] == Cut.SENTENCE  # no space after CJK punctuation, still a sentence end
    assert cut["更多"] == Cut.NEVER  # the end of the text is not a gap


def test_raw_html_and_unsafe_links_are_text() -> None:
    assert texts("<b>x</b> [y](javascript:alert(1)) [z](ftp://e.co)") == "<b>x</b> [y](javascript:alert(1)) z"
    assert all(not a.marks for a in read_markdown("[z](ftp://e.co)"))


def test_an_image_is_its_description_linked_to_the_picture() -> None:
    atoms = read_markdown("![hop cones](https://e.co/hops.png)")
    assert "".join(a.text for a in atoms) == "hop cones"
    assert all(a.marks == (Mark("link", "https://e.co/hops.png"),) for a in atoms)
    assert all(not a.marks for a in read_markdown("![x](javascript:alert(1))"))
