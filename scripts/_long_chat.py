"""The long plain sample: two travellers plan twelve days in Japan with an assistant.

Early turns fix facts (dates, flight numbers, budget, a peanut allergy, a hotel's check-in
time, a JR Pass decision) that later turns ask about again, so a strategy that drops the
early rounds visibly loses them.
"""

from __future__ import annotations

from typing import Any

from _chat_builder import ChatBuilder

TURNS: list[tuple[str, str]] = [
    (
        "Hi! I'm Lena. My partner Tom and I want to plan a trip to Japan this autumn. "
        "First time for both of us. Can you help us plan it step by step?",
        "Happily! To start, tell me: your dates (or how many days), where you fly from, a rough "
        "budget, and what you both enjoy (food, temples, hiking, cities, art, onsen...).",
    ),
    (
        "We fly from Munich. Outbound is Lufthansa LH714, Friday 3 October 2025, lands at "
        "Haneda on Saturday 4 October at 07:55. Return is LH715 from Haneda on Wednesday 15 "
        "October at 10:40.",
        "Noted: LH714 MUC-HND, arriving Sat 4 Oct 07:55; LH715 HND-MUC, departing Wed 15 Oct "
        "10:40. That gives you 11 nights on the ground. Since you fly home from Haneda, a loop "
        "Tokyo -> Kyoto/Osaka -> back to Tokyo works best.",
    ),
    (
        "Budget is about 6,000 EUR for both of us, without the flights. We love food, walking "
        "around neighbourhoods, some temples but not ten a day, and Tom wants one proper "
        "hike.",
        "6,000 EUR for two over 11 nights is about 545 EUR a day for both, comfortable for "
        "Japan at current rates (roughly 160 JPY per EUR). A first split: hotels about "
        "2,600 EUR, transport 700, food 1,700, activities and shopping 1,000.",
    ),
    (
        "Important: I have a peanut allergy, a serious one. I carry an EpiPen.",
        "Thank you, that matters a lot. Peanuts are less common in Japanese cooking than in "
        "some cuisines, but they appear in some sauces (goma-dare sometimes has peanut), "
        "sweets and in Chinese-style dishes. I'll suggest an allergy card in Japanese, and "
        "I'll flag risky dishes as we go. Bring two EpiPens and a doctor's letter in English.",
    ),
    (
        "Can you write the allergy card text?",
        "Here is a version restaurant staff understand well:\n\n"
        "私は重度のピーナッツアレルギーです。ピーナッツ、ピーナッツ油、ピーナッツを含む調味料を"
        "食べるとアナフィラキシーを起こします。この料理にピーナッツは入っていますか？\n\n"
        "(I have a severe peanut allergy. Peanuts, peanut oil or sauces containing peanuts "
        "cause anaphylaxis. Does this dish contain peanuts?) Print it and keep a photo on "
        "your phone.",
    ),
    (
        "How many nights where? We were thinking Tokyo, Kyoto and maybe Hakone.",
        "A balanced plan for 11 nights:\n- Tokyo: 4 nights (4-8 Oct)\n- Hakone: 1 night "
        "(8-9 Oct), with an onsen ryokan\n- Kyoto: 4 nights (9-13 Oct)\n- Osaka: 1 night "
        "(13-14 Oct)\n- Tokyo: 1 night near Haneda (14-15 Oct) for the 10:40 flight.",
    ),
    (
        "Why a night near Haneda at the end? Couldn't we go from Osaka in the morning?",
        "Your flight leaves at 10:40, so you should be at Haneda by about 08:40. The first "
        "Shinkansen from Shin-Osaka reaches Shinagawa around 08:30: far too tight. Flying "
        "Itami-Haneda at 07:00 works but risks the connection. The night near Haneda makes "
        "the last morning stress-free.",
    ),
    (
        "Makes sense. Is the JR Pass worth it for us?",
        "Not any more for this route. Since the October 2023 price rise the 7-day pass "
        "costs 50,000 JPY. Your long rides are Tokyo-Odawara (Hakone), Odawara-Kyoto, "
        "Kyoto-Osaka and Shin-Osaka-Tokyo: individually about 34,000 JPY per person. Buy "
        "single tickets; use a Suica/PASMO card on your phone for local trains and buses.",
    ),
    (
        "OK, no JR Pass. Hotels: we like small, quiet places, not huge chains. In Tokyo "
        "maybe somewhere walkable, not Shinjuku.",
        "For walkable and calmer: Kuramae/Asakusa (craft shops, river walks), Yanaka (old "
        "Tokyo, temples, cats) or Ebisu/Nakameguro (restaurants, canal). For a first visit "
        "with good transport I'd pick Kuramae. Expect 25,000-35,000 JPY a night for a "
        "quality small hotel.",
    ),
    (
        "We booked Nui. Hostel & Bar Lounge... no wait, we booked the hotel 'Kuramae Riverside "
        "Inn', double room, 4 nights, 118,400 JPY total. Check-in from 15:00.",
        "Kuramae Riverside Inn, 4 nights, 118,400 JPY (about 740 EUR), check-in 15:00. Since "
        "you land at 07:55, ask them to keep your bags in the morning; most small hotels do.",
    ),
    (
        "What should we do on the first day, when we're jet-lagged?",
        "Keep day 1 (Sat 4 Oct) gentle and outdoors to reset your body clock: drop bags at "
        "the hotel around 10:00, walk along the Sumida river to Asakusa and Senso-ji, lunch "
        "at a soba shop, an afternoon nap after check-in at 15:00, then an early dinner "
        "nearby. Stay up until 21:00 at least.",
    ),
    (
        "Any soba place you'd recommend near Asakusa?",
        "Namiki Yabusoba is a classic (closed Wednesdays and Thursdays; Saturday is fine). "
        "Soba itself is peanut-free, but show your card for the dipping sauces and tempura "
        "oil.",
    ),
    (
        "Day 2?",
        "Day 2 (Sun 5 Oct): Yanaka in the morning (Yanaka Ginza, the cemetery walk, "
        "Nezu shrine), lunch in Nezu, then Ueno park and the Tokyo National Museum in the "
        "afternoon. Evening: Kappabashi kitchen street closes early on Sundays, so save it "
        "for Monday.",
    ),
    (
        "Day 3 and 4?",
        "Day 3 (Mon 6 Oct): Kappabashi in the morning (knives!), then Shibuya and a "
        "Nakameguro canal walk, dinner in Ebisu yokocho.\nDay 4 (Tue 7 Oct): a day trip to "
        "Kamakura: Hokokuji bamboo garden, the Great Buddha, and the Daibutsu hiking trail. "
        "That could be Tom's hike, but it's short (about 1.5 hours).",
    ),
    (
        "Tom says the Kamakura trail is too short. What's a proper hike?",
        "Then Hakone is the place: the old Tokaido road from Hatajuku to Moto-Hakone, about "
        "3 hours with cedar avenues and stone paving, or, more demanding, Mount Kintoki "
        "(1,212 m, 3.5-4 hours round trip) with a view of Fuji on clear days. Both fit your "
        "Hakone day, 8 October.",
    ),
    (
        "Kintoki sounds great. How do we get to Hakone on the 8th with our luggage?",
        "Send your big bags ahead: a takkyubin service (Yamato) from the Tokyo hotel straight "
        "to your Kyoto hotel costs about 2,500 JPY per case and arrives the next day. Then "
        "travel light: Odakyu Romancecar from Shinjuku to Hakone-Yumoto (85 minutes, about "
        "2,470 JPY per person).",
    ),
    (
        "Which ryokan in Hakone? Budget maybe 60,000 JPY for the night for both, with dinner.",
        "Within 60,000 JPY for two with dinner and breakfast: Fukuzumiro in Tonosawa (a "
        "historic wooden ryokan) or Hakone Ginyu for a splurge (over budget, around 90,000). "
        "Tell the ryokan about the peanut allergy when booking: kaiseki dinners are prepared "
        "in advance, so they need notice.",
    ),
    (
        "We booked Fukuzumiro, 58,300 JPY with dinner and breakfast. They confirmed no peanuts.",
        "Great. Fukuzumiro, 8-9 Oct, 58,300 JPY, allergy confirmed. Check-in there is usually "
        "15:00-18:00 and dinner is served at a fixed time, so plan the Kintoki hike for the "
        "morning: start by 09:30 at the Kintoki shrine trailhead.",
    ),
    (
        "How do we get from Hakone to Kyoto on the 9th?",
        "Bus or Hakone Tozan train down to Odawara, then the Shinkansen Hikari to Kyoto "
        "(about 2 hours, 11,900 JPY per person reserved). The Nozomi doesn't stop at "
        "Odawara. Aim for a train around 11:00 to reach Kyoto by 13:30.",
    ),
    (
        "Kyoto hotel: same idea, small and quiet. Near the river?",
        "Along the Kamo river between Sanjo and Gojo is ideal: central, but quiet streets. "
        "Or Higashiyama near Kiyomizu-dera, which is lovely at night but crowded by day.",
    ),
    (
        "We found 'Hotel Kamogawa Terrace', 4 nights, 142,000 JPY. Check-in is only from "
        "16:00 though.",
        "Hotel Kamogawa Terrace, 9-13 Oct, 142,000 JPY (about 890 EUR), check-in 16:00. "
        "You'll arrive around 13:30, so drop your daypacks and have lunch at Nishiki market "
        "before check-in. Your big bags from Tokyo arrive there the same day.",
    ),
    (
        "Wait, will the bags arrive on the 9th if we send them from Tokyo on the morning of "
        "the 8th?",
        "Yes: Yamato's next-day delivery Tokyo to Kyoto is standard. Tell the Tokyo hotel "
        "the delivery date (9 Oct) and the Kyoto hotel name; the front desk fills in the "
        "form. Keep overnight things for Hakone in a daypack.",
    ),
    (
        "Let's plan Kyoto. Day 1 is the arrival afternoon.",
        "Thu 9 Oct: Nishiki market lunch (careful: some stalls sell candied nuts; ask about "
        "peanuts), check-in at 16:00, then a dusk walk through Gion and Shirakawa, dinner in "
        "Pontocho.",
    ),
    (
        "Fri 10 Oct?",
        "Fri 10 Oct: Fushimi Inari early (be at the gates by 07:30 to avoid crowds, walk up "
        "to the Yotsutsuji viewpoint, about 1.5 hours), then Tofuku-ji, lunch, and the "
        "Sanjusangendo hall in the afternoon.",
    ),
    (
        "Sat 11 Oct?",
        "Sat 11 Oct: Arashiyama. The bamboo grove at 08:00, Okochi Sanso villa, a rowboat on "
        "the Hozu river, and the walk north to Adashino Nenbutsu-ji. Saturday is busy, so go "
        "early and head back by mid-afternoon.",
    ),
    (
        "Sun 12 Oct?",
        "Sun 12 Oct: a slower day. The Philosopher's Path from Ginkaku-ji to Nanzen-ji, "
        "lunch at a tofu restaurant near Nanzen-ji (yudofu, peanut-free, but check the "
        "sesame sauce), and a tea ceremony in the afternoon.",
    ),
    (
        "Could we do a cooking class one day?",
        "Yes, an evening obanzai (Kyoto home cooking) class fits Friday 10 Oct after "
        "Sanjusangendo. Small classes cost around 12,000 JPY per person and can adapt to "
        "allergies if you tell them when you book.",
    ),
    (
        "Booked the cooking class for Friday evening, 18:00, 24,000 JPY for both.",
        "Noted: obanzai class Fri 10 Oct 18:00, 24,000 JPY. It's near Shijo Karasuma, 10 "
        "minutes from your hotel on foot.",
    ),
    (
        "Now Osaka on the 13th.",
        "Mon 13 Oct (a public holiday, Sports Day): train Kyoto-Osaka in 15 minutes by "
        "Shinkansen or 30 by JR special rapid (580 JPY). Drop bags at the hotel, then "
        "Osaka castle park, and an evening of food in Dotonbori and Shinsekai. Expect crowds "
        "because of the holiday.",
    ),
    (
        "Street food in Osaka with a peanut allergy, is that risky?",
        "Takoyaki and okonomiyaki are usually peanut-free, but some shops use sauces or "
        "toppings with peanut; kushikatsu batter is usually fine. The risk is cross-contact "
        "on shared griddles. Show the card everywhere, favour shops with ingredient lists, "
        "and keep the EpiPen on you, not in the hotel.",
    ),
    (
        "Osaka hotel for one night, near Namba?",
        "Namba is practical for the evening and for the trip back to Tokyo. Small hotels "
        "there run 18,000-25,000 JPY for a double.",
    ),
    (
        "Booked 'Namba Canal Hotel', 21,600 JPY.",
        "Namba Canal Hotel, 13-14 Oct, 21,600 JPY. On the 14th, take the Shinkansen from "
        "Shin-Osaka to Shinagawa (about 2h30, 14,720 JPY reserved), then the Keikyu line to "
        "Haneda in 15 minutes.",
    ),
    (
        "And the last night near Haneda?",
        "The hotels inside Haneda Terminal 3 are the easiest: 'Villa Fontaine Grand Haneda "
        "Airport' is connected to the terminal. About 30,000 JPY. Then on the 15th you just "
        "walk to check-in.",
    ),
    (
        "Booked Villa Fontaine for the 14th, 29,800 JPY.",
        "All nights are now booked:\n- 4-8 Oct Kuramae Riverside Inn, 118,400 JPY\n- 8-9 "
        "Oct Fukuzumiro, 58,300 JPY\n- 9-13 Oct Hotel Kamogawa Terrace, 142,000 JPY\n- "
        "13-14 Oct Namba Canal Hotel, 21,600 JPY\n- 14-15 Oct Villa Fontaine Haneda, 29,800 "
        "JPY\nTotal 370,100 JPY, about 2,310 EUR at 160 JPY/EUR, under your 2,600 EUR hotel "
        "budget.",
    ),
    (
        "Perfect. What about money? Cash or card?",
        "Both. Cards work in hotels, department stores and most restaurants in cities, but "
        "small shops, shrines, some ryokan extras and market stalls are cash-only. Withdraw "
        "at 7-Eleven ATMs (they accept foreign cards). Carry about 30,000 JPY at a time.",
    ),
    (
        "Phone and internet?",
        "An eSIM is easiest: buy a 20 GB Japan eSIM before you fly and install it at home, "
        "activate on landing. Both phones need to be unlocked and eSIM-capable.",
    ),
    (
        "Do we need any visa?",
        "German citizens can enter Japan visa-free for up to 90 days as tourists. You need a "
        "passport valid for the duration of the stay. You can fill in Visit Japan Web before "
        "the flight for faster immigration and customs.",
    ),
    (
        "Tom's passport expires in December 2025. Is that OK?",
        "Yes. Japan only requires validity for the length of your stay, and you leave on 15 "
        "October. But check your airline and any transit rules; a direct flight MUC-HND has "
        "no transit, so you're fine.",
    ),
    (
        "Is there anything about the EpiPen at customs?",
        "Adrenaline auto-injectors for personal use are allowed. Carry them in your hand "
        "luggage with the doctor's letter in English; up to a one-month supply needs no "
        "permit (Yakkan Shoumei). Keep them in their original packaging.",
    ),
    (
        "What should we pack for October weather?",
        "Early to mid October: Tokyo and Kyoto 18-25 °C by day, 13-17 °C at night; Hakone is "
        "cooler, 10-18 °C, and cold at the summit of Kintoki in the morning. Layers, a light "
        "rain jacket (typhoon remnants are possible in early October), and proper shoes for "
        "the hike.",
    ),
    (
        "Typhoons? Should we worry?",
        "The peak season is August-September, but early October storms happen. If one is "
        "forecast, Shinkansen services can be suspended for a day. Your plan has slack: the "
        "only fixed points are the ryokan night (8 Oct) and the flight (15 Oct). Travel "
        "insurance with trip-delay cover is a good idea.",
    ),
    (
        "Let's talk food more. Any special dinners worth booking ahead?",
        "Two worth booking: a sushi counter in Tokyo (omakase, 15,000-30,000 JPY per person; "
        "book 2-4 weeks ahead), and a kaiseki dinner in Kyoto (you already have one at the "
        "ryokan, so maybe a simpler shojin-ryori Buddhist vegetarian lunch at a temple "
        "instead). Tell both about the allergy when booking.",
    ),
    (
        "Book a sushi place for Monday 6 Oct, somewhere near Ebisu.",
        "I can't make bookings myself, but for Ebisu look at small counters with online "
        "booking via Omakase or TableCheck. For Mon 6 Oct, pick the 18:00 seating; you're "
        "walking the Nakameguro canal in the afternoon anyway.",
    ),
    (
        "We got 'Sushi Ebisu Kazu', Monday 6 Oct 18:00, 22,000 JPY per person.",
        "Noted: Sushi Ebisu Kazu, Mon 6 Oct 18:00, 44,000 JPY for two. Sushi is low risk for "
        "peanuts; mention the allergy anyway when you sit down.",
    ),
    (
        "How much have we spent so far, roughly?",
        "Booked so far: hotels 370,100 JPY, cooking class 24,000, sushi 44,000 = 438,100 JPY, "
        "about 2,740 EUR. That leaves about 3,260 EUR of the 6,000 EUR for transport (about "
        "700), daily food and everything else, around 255 EUR a day for both of you.",
    ),
    (
        "Tom asks if we can see Mount Fuji properly somewhere.",
        "From the Kintoki summit on a clear morning (best chance early). Also from the "
        "Shinkansen between Odawara and Shin-Fuji on the right side going towards Kyoto: "
        "seat E on the 9 Oct ride. October visibility is moderate; mornings are best.",
    ),
    (
        "Seat E, got it. What about a day trip to Nara from Kyoto?",
        "Nara is 45 minutes from Kyoto on the Kintetsu line. You could swap it for the slow "
        "Sunday (12 Oct): Todai-ji, the deer park and Kasuga Taisha. That would move the "
        "Philosopher's Path to a late afternoon on Sat 11 Oct after Arashiyama, which is "
        "tiring. I'd keep Sunday as is unless Nara matters a lot to you.",
    ),
    (
        "Let's skip Nara. Now, souvenirs: what's good to bring home?",
        "Kitchen knives from Kappabashi (Mon 6 Oct), tenugui cloths, Kyoto tea (Ippodo), "
        "ceramics from Kiyomizu, and snacks for colleagues. Watch out for peanut in snacks: "
        "some senbei and sweets contain it; the label says 落花生 or ピーナッツ.",
    ),
    (
        "Knife question: can we bring a knife home in luggage?",
        "Yes, in checked luggage only, well wrapped. Never in hand luggage. Shops in "
        "Kappabashi wrap knives for travel and some ship abroad, which saves weight.",
    ),
    (
        "What about tipping?",
        "No tipping in Japan. Leaving money can cause confusion; staff may chase you to "
        "return it. At a ryokan, an envelope for the room attendant is an old custom but "
        "not expected.",
    ),
    (
        "Basic phrases we should learn?",
        "Sumimasen (excuse me / sorry), arigatou gozaimasu (thank you), kore o kudasai (this "
        "one, please), o-kaikei onegaishimasu (the bill, please), and for you: pinattsu "
        "arerugii ga arimasu (I have a peanut allergy).",
    ),
    (
        "Can you give us the whole itinerary day by day now?",
        "Sat 4 Oct: arrive HND 07:55 (LH714), Kuramae, Asakusa, soba lunch.\n"
        "Sun 5 Oct: Yanaka, Nezu, Ueno, Tokyo National Museum.\n"
        "Mon 6 Oct: Kappabashi, Shibuya, Nakameguro; Sushi Ebisu Kazu 18:00.\n"
        "Tue 7 Oct: Kamakura day trip.\n"
        "Wed 8 Oct: send bags to Kyoto; Romancecar to Hakone; Fukuzumiro.\n"
        "Thu 9 Oct: Kintoki hike? No: see below. Odawara -> Kyoto (seat E), Nishiki, Gion.\n"
        "Fri 10 Oct: Fushimi Inari 07:30, Tofuku-ji, Sanjusangendo; cooking class 18:00.\n"
        "Sat 11 Oct: Arashiyama.\nSun 12 Oct: Philosopher's Path, tofu lunch, tea ceremony.\n"
        "Mon 13 Oct: to Osaka; castle, Dotonbori; Namba Canal Hotel.\n"
        "Tue 14 Oct: Shinkansen to Shinagawa; Villa Fontaine Haneda.\n"
        "Wed 15 Oct: LH715 10:40.\n\nOne conflict: the Kintoki hike. It has to be the "
        "morning of Wed 8 Oct or Thu 9 Oct.",
    ),
    (
        "Which one?",
        "Thursday 9 Oct morning: you're already in Hakone, start at 08:30 after the ryokan "
        "breakfast, back by 12:30, and take a 14:00 train from Odawara to reach Kyoto around "
        "16:15, right at your 16:00 check-in. On Wednesday you'd arrive in Hakone only around "
        "noon after sending bags.",
    ),
    (
        "Thursday it is. But then Nishiki market is closed by the time we arrive?",
        "Many Nishiki stalls close around 17:00-18:00, so you'd have about an hour. Swap it: "
        "Thursday evening Gion and Pontocho dinner, and Nishiki on Sunday late morning before "
        "the Philosopher's Path.",
    ),
    (
        "Good. What's the total transport cost estimate now?",
        "Per person: Romancecar 2,470, Hakone buses about 1,500, Odawara-Kyoto 11,900, "
        "Kyoto-Osaka 580, Shin-Osaka-Shinagawa 14,720, Keikyu to Haneda 330, Haneda to "
        "Kuramae on arrival about 600, Kamakura day trip about 2,000, local trains and buses "
        "about 6,000. Roughly 40,100 JPY each, 80,200 for both, about 500 EUR. Plus luggage "
        "forwarding (2 cases x 2,500 = 5,000 JPY).",
    ),
    (
        "Under the 700 then. Let's say we have some money left: anything special to add?",
        "With about 200 EUR of transport budget left and a comfortable daily budget, you "
        "could add a private onsen bath (kashikiri) at Fukuzumiro, a sake tasting in Fushimi "
        "after Fushimi Inari, or a night at the Tokyo teamLab Planets exhibition.",
    ),
    (
        "Sake tasting in Fushimi after Inari sounds nice.",
        "Gekkeikan Okura Museum in Fushimi, 10 minutes by train from Inari: tasting included "
        "in the 600 JPY entry. Fits Fri 10 Oct late morning, before Tofuku-ji.",
    ),
    (
        "I'm a bit nervous about eating out with the allergy. Any more tips?",
        "A few that help: carry the card and also show it on your phone; prefer restaurants "
        "with fewer dishes (specialists: sushi, soba, tonkatsu, yakitori) over izakaya with "
        "long menus; avoid Chinese-style dishes (tantanmen often has peanut) and sweets "
        "shops' mixed nuts; know the emergency number 119 (ambulance) and that hospitals in "
        "Tokyo and Kyoto have English-speaking staff. Your hotels can call for you.",
    ),
    (
        "What's the address of our Kyoto hotel again? I want to send it to my mum.",
        "I only have the name from our chat, not the street address: Hotel Kamogawa Terrace, "
        "where you stay 9-13 October. The booking confirmation will have the full address "
        "and phone number.",
    ),
    (
        "Fair. Now, Tom wants to know the name of the ryokan and what we paid.",
        "Fukuzumiro in Tonosawa, Hakone, the night of 8-9 October, 58,300 JPY with dinner "
        "and breakfast, peanut allergy confirmed.",
    ),
    (
        "And our flight home, what time again?",
        "LH715 from Haneda on Wednesday 15 October 2025 at 10:40. You're sleeping at Villa "
        "Fontaine Grand Haneda Airport the night before, so leave the room around 08:15.",
    ),
    (
        "Can you make a short packing checklist?",
        "- Passports (Tom's valid until Dec 2025: fine), printed bookings\n- Two EpiPens + "
        "doctor's letter, allergy card (printed + phone)\n- eSIM installed, chargers, a "
        "Type A plug adapter\n- Layers, rain jacket, hiking shoes for Kintoki\n- Cash card "
        "that works at 7-Eleven ATMs\n- Small towel and a coin purse\n- Space for knives "
        "and tea on the way back",
    ),
    (
        "Thanks! Last thing: what did we decide about the JR Pass and why, so I can explain "
        "it to my brother?",
        "You decided against it: the 7-day pass is 50,000 JPY per person since October 2023, "
        "while your actual Shinkansen and JR rides add up to about 34,000 JPY per person. "
        "Single tickets plus a Suica card are cheaper and more flexible.",
    ),
    (
        "You've been great. We're really excited now.",
        "Have a wonderful trip, Lena and Tom! Enjoy the Kintoki sunrise, the sushi in Ebisu "
        "and the cooking class in Kyoto. いってらっしゃい (have a good trip)!",
    ),
]


def build() -> dict[str, Any]:
    b = ChatBuilder("trip")
    for user, assistant in TURNS:
        b.user(user)
        b.assistant(assistant)
    return b.document(
        "Plain chat: planning twelve days in Japan",
        "A long user/assistant chat without tools. Early turns fix facts (flight LH714 on 3 "
        "Oct 2025, LH715 home on 15 Oct 10:40, a 6,000 EUR budget, a peanut allergy, hotel "
        "names and prices, no JR Pass) that the last turns ask about again.",
    )
