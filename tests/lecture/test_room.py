"""Rooms: the projector says which step it shows, the notes view reads it; codes are what the links carry."""

from ui.lecture import room as rooms


def test_a_room_follows_the_projector_and_keeps_what_was_revealed():
    code = rooms.new_code()
    assert len(code) == 4 and rooms.clean_code(code.lower()) == code
    assert rooms.where(code) is None  # no projector yet
    rooms.show_step(code, "attention", 3)
    plan, step, when = rooms.where(code)
    assert (plan, step) == ("attention", 3) and when > 0
    assert not rooms.is_revealed(code, "attention", 3)
    rooms.reveal(code, "attention", 3)
    rooms.show_step(code, "attention", 4)
    assert rooms.where(code)[:2] == ("attention", 4)
    assert rooms.is_revealed(code, "attention", 3) and not rooms.is_revealed(code, "attention", 4)


def test_room_codes_from_a_link_are_checked():
    assert rooms.clean_code(" k7qf ") == "K7QF"
    for bad in ("", None, "K7Q!", "IO10", "x" * 13, "<script>"):
        assert rooms.clean_code(bad) == "", bad


def test_the_oldest_rooms_go_first():
    codes = [f"Z{n:04d}".replace("0", "A").replace("1", "B") for n in range(rooms.MAX_ROOMS + 5)]
    for code in codes:
        rooms.show_step(code, "attention", 1)
    assert rooms.where(codes[0]) is None and rooms.where(codes[-1]) is not None
    assert len(rooms.ROOMS) <= rooms.MAX_ROOMS
