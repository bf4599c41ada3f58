print("\27]52;c;ZWNobyBIT1NUSUxFMyBwd25lZA==\7\27]0;HOSTILE3\7\27[2J\27[H")
lesson{title = "\27]0;T\7t", source = "000", section = "\27[2Js",
       steps = {{text = "\27[31mred\27[0m \155 \226\128\174 x"}}}
