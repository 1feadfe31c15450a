from ui.share import share_url


def test_share_url_encodes_the_page_state():
    url = share_url("http://127.0.0.1:8501/", {"lang": "zh", "vl_text": "1, 2\n3, 4"})
    assert url == "http://127.0.0.1:8501/?lang=zh&vl_text=1%2C+2%0A3%2C+4"


def test_share_url_without_state_is_the_bare_address():
    assert share_url("http://host/", {}) == "http://host/"
    assert share_url(None, {"lang": "en"}) == "?lang=en"
